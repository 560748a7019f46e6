//! A test plugin named `reader`: `register` reads the host's Widget and its Secret through the
//! host and fails with what it found (e.g. `widget colour=blue; secret user=admin`).

use base64::Engine as _;
use bmh_api::{HardwareDetails, ObjectKey};
use bmhctl_plugin_sdk::abi::{HostConfigureInput, HostRequirements, ObjectKind, ObjectRequest};
use bmhctl_plugin_sdk::{
    AdoptData, AdoptOptions, DeprovisionOptions, DetachOptions, EventSink, HardwareState, HostData,
    InspectData, InspectOptions, InspectResult, ManagementAccessData, ObjectReader, OpResult,
    PluginContext, PowerOffOptions, PowerOnOptions, PrepareData, ProvisionData, ProvisionOptions,
    Provisioner, ProvisionerError, ProvisionerFactory, RegisterOptions, RegisterResult,
    ServicingData, StepOptions, StepResult,
};

include!("../../done_calls.rs");

pub const API_VERSION: &str = "example.bmhctl.metal3.io/v1alpha1";
pub const KIND: &str = "Widget";

pub struct Reader {
    objects: ObjectReader,
}

impl Reader {
    pub fn new(ctx: PluginContext) -> Result<Self, ProvisionerError> {
        Ok(Self {
            objects: ctx.objects(),
        })
    }
}

pub fn host_configure(input: HostConfigureInput) -> Result<HostRequirements, ProvisionerError> {
    Ok(HostRequirements {
        object_kinds: vec![ObjectKind {
            api_version: API_VERSION.into(),
            kind: KIND.into(),
        }],
        namespace: Some(input.default_namespace),
    })
}

impl ProvisionerFactory for Reader {
    fn new_provisioner(
        &self,
        host: HostData,
        _events: EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        Ok(Box::new(P {
            objects: self.objects.clone(),
            key: host.key,
        }))
    }
}

struct P {
    objects: ObjectReader,
    key: ObjectKey,
}

impl P {
    /// What the host answers for this host's Widget and the Secret it names.
    fn findings(&self) -> Result<String, ProvisionerError> {
        let widget = self.objects.read(&ObjectRequest {
            api_version: API_VERSION.into(),
            kind: KIND.into(),
            namespace: self.key.namespace.clone(),
            name: self.key.name.clone(),
        })?;
        let Some(widget) = widget else {
            return Ok("widget none; secret none".into());
        };
        let colour = widget["spec"]["colour"].as_str().unwrap_or("?");
        let secret = match widget["spec"]["secretName"].as_str() {
            Some(name) => self.objects.read_secret(&self.key.namespace, name)?,
            None => None,
        };
        let user = secret.map(|s| {
            let encoded = s["data"]["username"].as_str().unwrap_or_default();
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .unwrap_or_default();
            String::from_utf8_lossy(&decoded).into_owned()
        });
        Ok(match user {
            Some(user) => format!("widget colour={colour}; secret user={user}"),
            None => format!("widget colour={colour}; secret none"),
        })
    }
}

impl Provisioner for P {
    fn register(
        &mut self,
        _: &ManagementAccessData,
        _opts: RegisterOptions,
    ) -> Result<RegisterResult, ProvisionerError> {
        Ok(RegisterResult {
            result: OpResult::failed(self.findings()?),
            provisioner_id: String::new(),
        })
    }
    fn inspect_hardware(
        &mut self,
        _: &InspectData,
        _opts: InspectOptions,
    ) -> Result<InspectResult, ProvisionerError> {
        Ok(InspectResult {
            result: OpResult::done(),
            started: true,
            details: Some(HardwareDetails::default()),
        })
    }
    done_calls!();
}

bmhctl_plugin_sdk::export_plugin!(
    name = "reader",
    factory = Reader::new,
    host_configure = host_configure,
);
