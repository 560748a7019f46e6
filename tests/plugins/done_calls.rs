// The calls both test plugins answer alike (included): each is done at once.
macro_rules! done_calls {
    () => {
        fn update_hardware_state(&mut self) -> Result<HardwareState, ProvisionerError> {
            Ok(HardwareState { powered_on: None })
        }
        fn adopt(
            &mut self,
            _: &AdoptData,
            _opts: AdoptOptions,
        ) -> Result<OpResult, ProvisionerError> {
            Ok(OpResult::done())
        }
        fn prepare(
            &mut self,
            _: &PrepareData,
            _opts: StepOptions,
        ) -> Result<StepResult, ProvisionerError> {
            Ok(StepResult {
                result: OpResult::done(),
                started: true,
            })
        }
        fn service(
            &mut self,
            _: &ServicingData,
            _opts: StepOptions,
        ) -> Result<StepResult, ProvisionerError> {
            Ok(StepResult {
                result: OpResult::done(),
                started: true,
            })
        }
        fn provision(
            &mut self,
            _: &ProvisionData,
            _opts: ProvisionOptions,
        ) -> Result<OpResult, ProvisionerError> {
            Ok(OpResult::done())
        }
        fn deprovision(&mut self, _opts: DeprovisionOptions) -> Result<OpResult, ProvisionerError> {
            Ok(OpResult::done())
        }
        fn delete(&mut self) -> Result<OpResult, ProvisionerError> {
            Ok(OpResult::done())
        }
        fn detach(&mut self, _opts: DetachOptions) -> Result<OpResult, ProvisionerError> {
            Ok(OpResult::done())
        }
        fn power_on(&mut self, _opts: PowerOnOptions) -> Result<OpResult, ProvisionerError> {
            Ok(OpResult::done())
        }
        fn power_off(&mut self, _opts: PowerOffOptions) -> Result<OpResult, ProvisionerError> {
            Ok(OpResult::done())
        }
        fn has_capacity(&mut self) -> Result<bool, ProvisionerError> {
            Ok(true)
        }
    };
}
