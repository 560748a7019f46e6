//! A test plugin named `panicky`: every call for a host whose name starts with `panic-` panics;
//! other hosts finish every operation at once (reaching `available` or `provisioned`). It also
//! declares a host-configure step and logs through the host's logger.

use bmh_api::{AutomatedCleaningMode, Cpu, HardwareDetails, RebootMode};
use bmhctl_plugin_sdk::abi::{HostConfigureInput, HostRequirements, ObjectKind};
use bmhctl_plugin_sdk::serde_json::Value;
use bmhctl_plugin_sdk::{
    AdoptData, EventSink, FirmwareComponentStatus, FirmwareSettings, HardwareState, HostData,
    ImageFormat, InspectData, Logger, ManagementAccessData, OpResult, PluginContext, PrepareData,
    ProvisionData, Provisioner, ProvisionerError, ProvisionerFactory, ServicingData,
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
        _: bool,
        _: bool,
    ) -> Result<(OpResult, String), ProvisionerError> {
        self.check();
        Ok((OpResult::done(), self.id.clone()))
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
        _: bool,
        _: bool,
        _: bool,
    ) -> Result<(OpResult, bool, Option<HardwareDetails>), ProvisionerError> {
        self.check();
        let details = HardwareDetails {
            cpu: Some(Cpu {
                arch: "x86_64".into(),
                count: 1,
                ..Cpu::default()
            }),
            ..HardwareDetails::default()
        };
        Ok((OpResult::done(), true, Some(details)))
    }
    fn update_hardware_state(&mut self) -> Result<HardwareState, ProvisionerError> {
        self.check();
        Ok(HardwareState { powered_on: None })
    }
    fn adopt(&mut self, _: &AdoptData, _: bool) -> Result<OpResult, ProvisionerError> {
        self.check();
        Ok(OpResult::done())
    }
    fn prepare(
        &mut self,
        _: &PrepareData,
        _: bool,
        _: bool,
    ) -> Result<(OpResult, bool), ProvisionerError> {
        self.check();
        Ok((OpResult::done(), true))
    }
    fn service(
        &mut self,
        _: &ServicingData,
        _: bool,
        _: bool,
    ) -> Result<(OpResult, bool), ProvisionerError> {
        self.check();
        Ok((OpResult::done(), true))
    }
    fn provision(&mut self, _: &ProvisionData, _: bool) -> Result<OpResult, ProvisionerError> {
        self.check();
        Ok(OpResult::done())
    }
    fn deprovision(
        &mut self,
        _: bool,
        _: AutomatedCleaningMode,
    ) -> Result<OpResult, ProvisionerError> {
        self.check();
        Ok(OpResult::done())
    }
    fn delete(&mut self) -> Result<OpResult, ProvisionerError> {
        self.check();
        Ok(OpResult::done())
    }
    fn detach(&mut self, _: bool) -> Result<OpResult, ProvisionerError> {
        self.check();
        Ok(OpResult::done())
    }
    fn power_on(&mut self, _: bool) -> Result<OpResult, ProvisionerError> {
        self.check();
        Ok(OpResult::done())
    }
    fn power_off(
        &mut self,
        _: RebootMode,
        _: bool,
        _: AutomatedCleaningMode,
    ) -> Result<OpResult, ProvisionerError> {
        self.check();
        Ok(OpResult::done())
    }
    fn has_capacity(&mut self) -> Result<bool, ProvisionerError> {
        self.check();
        Ok(true)
    }
    fn get_firmware_settings(&mut self, _: bool) -> Result<FirmwareSettings, ProvisionerError> {
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
