//! A test plugin named `panicky`: every call for a host named `panic-*` panics.

use bmh_api::{Cpu, HardwareDetails};
use bmhctl_plugin_sdk::abi::{HostConfigureInput, HostRequirements, ObjectKind};
use bmhctl_plugin_sdk::{
    AdoptData, AdoptOptions, CallObserver, DeprovisionOptions, DetachOptions, EventSink,
    HardwareState, HostData, InspectData, InspectOptions, InspectResult, Logger,
    ManagementAccessData, ObservedProvisioner, OpResult, PluginContext, PowerOffOptions,
    PowerOnOptions, PrepareData, ProvisionData, ProvisionOptions, Provisioner, ProvisionerError,
    ProvisionerFactory, RegisterOptions, RegisterResult, ServicingData, StepOptions, StepResult,
};
use std::time::Duration;

include!("../../done_calls.rs");

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
        let p = Box::new(P {
            id: if host.provisioner_id.is_empty() {
                host.key.name.clone()
            } else {
                host.provisioner_id
            },
        });
        if !host.key.name.starts_with("panic-") {
            return Ok(p);
        }
        Ok(Box::new(ObservedProvisioner {
            inner: p,
            observer: Box::new(Panic),
        }))
    }
}

/// Panics on every call of a `panic-*` host, but those P leaves to the trait's defaults.
struct Panic;

impl CallObserver for Panic {
    fn observe(&self, call: &'static str, _took: Duration) {
        let unchecked = [
            "create_bmc_event_subscription",
            "delete_bmc_event_subscription",
            "persistent_state",
        ];
        if !unchecked.contains(&call) {
            panic!("panicky plugin: deliberate panic");
        }
    }
}

struct P {
    id: String,
}

impl Provisioner for P {
    fn register(
        &mut self,
        _: &ManagementAccessData,
        _opts: RegisterOptions,
    ) -> Result<RegisterResult, ProvisionerError> {
        Ok(RegisterResult {
            result: OpResult::done(),
            provisioner_id: self.id.clone(),
        })
    }
    fn inspect_hardware(
        &mut self,
        _: &InspectData,
        _opts: InspectOptions,
    ) -> Result<InspectResult, ProvisionerError> {
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
    done_calls!();
    fn get_data_image_status(&mut self) -> Result<bool, ProvisionerError> {
        Ok(false)
    }
    fn attach_data_image(&mut self, _: &str) -> Result<(), ProvisionerError> {
        Ok(())
    }
    fn detach_data_image(&mut self) -> Result<(), ProvisionerError> {
        Ok(())
    }
}

bmhctl_plugin_sdk::export_plugin!(
    name = "panicky",
    factory = Panicky::new,
    host_configure = host_configure,
);
