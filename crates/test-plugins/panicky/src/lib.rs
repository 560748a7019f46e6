//! A test plugin named `panicky`: every call for a host named `panic-*` panics.

use bmh_api::{Cpu, HardwareDetails};
use bmhctl_plugin_sdk::abi::{HostConfigureInput, HostRequirements, ObjectKind};
use bmhctl_plugin_sdk::serde_json::Value;
use bmhctl_plugin_sdk::{
    AdoptData, AdoptOptions, DeprovisionOptions, DetachOptions, EventSink, FirmwareComponentStatus,
    FirmwareSettings, FirmwareSettingsOptions, HardwareState, HostData, ImageFormat, InspectData,
    InspectOptions, InspectResult, Logger, ManagementAccessData, OpResult, PluginContext,
    PowerOffOptions, PowerOnOptions, PrepareData, ProvisionData, ProvisionOptions, Provisioner,
    ProvisionerError, ProvisionerFactory, RegisterOptions, RegisterResult, ServicingData,
    StepOptions, StepResult,
};
use std::collections::BTreeMap;

pub struct Panicky {
    logger: Logger,
}

impl Panicky {
    pub fn new(ctx: PluginContext) -> Result<Self, ProvisionerError> {
        let logger = ctx.logger();
        logger.info("panicky factory created");
        Ok(Self { logger })
    }
}

pub fn host_configure(_input: HostConfigureInput) -> Result<HostRequirements, ProvisionerError> {
    Ok(HostRequirements {
        object_kinds: vec![ObjectKind {
            api_version: "test.bmhctl.metal3.io/v1".into(),
            kind: "Panic".into(),
        }],
        namespace: None,
    })
}

impl ProvisionerFactory for Panicky {
    fn new_provisioner(
        &self,
        host: HostData,
        _events: EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        self.logger
            .debug(format!("provisioner for {}", host.key.name));
        Ok(Box::new(P {
            panics: host.key.name.starts_with("panic-"),
            id: if host.provisioner_id.is_empty() {
                host.key.name.clone()
            } else {
                host.provisioner_id
            },
        }))
    }
}

struct P {
    panics: bool,
    id: String,
}

impl P {
    fn check(&self) {
        if self.panics {
            panic!("panicky plugin: deliberate panic");
        }
    }
}

impl Provisioner for P {
    fn register(
        &mut self,
        _: &ManagementAccessData,
        _opts: RegisterOptions,
    ) -> Result<RegisterResult, ProvisionerError> {
        self.check();
        Ok(RegisterResult {
            result: OpResult::done(),
            provisioner_id: self.id.clone(),
        })
    }
    fn preprovisioning_image_formats(
        &mut self,
    ) -> Result<Option<Vec<ImageFormat>>, ProvisionerError> {
        self.check();
        Ok(None)
    }
    fn inspect_hardware(
        &mut self,
        _: &InspectData,
        _opts: InspectOptions,
    ) -> Result<InspectResult, ProvisionerError> {
        self.check();
        let details = HardwareDetails {
            cpu: Some(Cpu {
                arch: "x86_64".into(),
                count: 1,
                ..Cpu::default()
            }),
            ..HardwareDetails::default()
        };
        Ok(InspectResult {
            result: OpResult::done(),
            started: true,
            details: Some(details),
        })
    }
    fn update_hardware_state(&mut self) -> Result<HardwareState, ProvisionerError> {
        self.check();
        Ok(HardwareState { powered_on: None })
    }
    fn adopt(&mut self, _: &AdoptData, _opts: AdoptOptions) -> Result<OpResult, ProvisionerError> {
        self.check();
        Ok(OpResult::done())
    }
    fn prepare(
        &mut self,
        _: &PrepareData,
        _opts: StepOptions,
    ) -> Result<StepResult, ProvisionerError> {
        self.check();
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
        self.check();
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
        self.check();
        Ok(OpResult::done())
    }
    fn deprovision(&mut self, _opts: DeprovisionOptions) -> Result<OpResult, ProvisionerError> {
        self.check();
        Ok(OpResult::done())
    }
    fn delete(&mut self) -> Result<OpResult, ProvisionerError> {
        self.check();
        Ok(OpResult::done())
    }
    fn detach(&mut self, _opts: DetachOptions) -> Result<OpResult, ProvisionerError> {
        self.check();
        Ok(OpResult::done())
    }
    fn power_on(&mut self, _opts: PowerOnOptions) -> Result<OpResult, ProvisionerError> {
        self.check();
        Ok(OpResult::done())
    }
    fn power_off(&mut self, _opts: PowerOffOptions) -> Result<OpResult, ProvisionerError> {
        self.check();
        Ok(OpResult::done())
    }
    fn has_capacity(&mut self) -> Result<bool, ProvisionerError> {
        self.check();
        Ok(true)
    }
    fn get_firmware_settings(
        &mut self,
        _opts: FirmwareSettingsOptions,
    ) -> Result<FirmwareSettings, ProvisionerError> {
        self.check();
        Ok(FirmwareSettings::default())
    }
    fn get_firmware_components(
        &mut self,
    ) -> Result<Vec<FirmwareComponentStatus>, ProvisionerError> {
        self.check();
        Ok(Vec::new())
    }
    fn add_bmc_event_subscription(
        &mut self,
        _: &Value,
        _: &[BTreeMap<String, String>],
    ) -> Result<OpResult, ProvisionerError> {
        self.check();
        Ok(OpResult::done())
    }
    fn remove_bmc_event_subscription(&mut self, _: &Value) -> Result<OpResult, ProvisionerError> {
        self.check();
        Ok(OpResult::done())
    }
    fn get_data_image_status(&mut self) -> Result<bool, ProvisionerError> {
        self.check();
        Ok(false)
    }
    fn attach_data_image(&mut self, _: &str) -> Result<(), ProvisionerError> {
        self.check();
        Ok(())
    }
    fn detach_data_image(&mut self) -> Result<(), ProvisionerError> {
        self.check();
        Ok(())
    }
    fn has_power_failure(&mut self) -> bool {
        self.check();
        false
    }
    fn get_health(&mut self) -> String {
        self.check();
        String::new()
    }
}

bmhctl_plugin_sdk::export_plugin!(
    name = "panicky",
    factory = Panicky::new,
    host_configure = host_configure,
);
