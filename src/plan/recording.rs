//! The provisioner of a plan: the fixture answers, each call that starts a change is noted.

use super::Step;
use bmh_api::AutomatedCleaningMode;
use bmhctl_plugin_sdk::{
    DeprovisionOptions, DetachOptions, ForwardingProvisioner, HostData, InspectData,
    InspectOptions, InspectResult, ManagementAccessData, OpResult, PowerOffOptions, PowerOnOptions,
    PrepareData, ProvisionData, ProvisionOptions, Provisioner, ProvisionerError,
    ProvisionerFactory, RegisterOptions, RegisterResult, ServicingData, StepOptions, StepResult,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The steps noted so far, shared by every provisioner of one host's simulation.
pub(super) type Steps = Arc<Mutex<Vec<Step>>>;

pub(super) struct RecordingFactory {
    pub inner: crate::provisioners::fixture::Fixture,
    pub steps: Steps,
}

impl bmhctl_plugin_sdk::ForwardingFactory for RecordingFactory {
    fn inner(&self) -> &dyn ProvisionerFactory {
        &self.inner
    }

    fn make_provisioner(
        &self,
        host: HostData,
        make: impl FnOnce(HostData) -> Result<Box<dyn Provisioner>, ProvisionerError>,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        let new_node = host.provisioner_id.is_empty();
        let inner = make(host)?;
        Ok(Box::new(Recording {
            inner,
            steps: self.steps.clone(),
            new_node,
        }))
    }
}

struct Recording {
    inner: Box<dyn Provisioner>,
    steps: Steps,
    /// The host has no provisioner ID yet: a registration creates its node.
    new_node: bool,
}

impl Recording {
    fn note(&self, step: Step) {
        let mut steps = crate::provisioners::lock(&self.steps);
        // A call repeated while its operation runs is one step.
        if steps.last() != Some(&step) {
            steps.push(step);
        }
    }
}

fn changes(raid: bool, settings: bool, components: bool) -> String {
    let parts: Vec<&str> = [
        (raid, "apply RAID"),
        (settings, "apply firmware settings"),
        (components, "update firmware"),
    ]
    .into_iter()
    .filter_map(|(on, part)| on.then_some(part))
    .collect();
    if parts.is_empty() {
        "clean (root device hints)".into()
    } else {
        parts.join(", ")
    }
}

// Only the calls that start a change are written here; the rest are forwarded.
impl ForwardingProvisioner for Recording {
    fn inner(&mut self) -> &mut dyn Provisioner {
        &mut *self.inner
    }

    fn inner_ref(&self) -> &dyn Provisioner {
        &*self.inner
    }

    fn register(
        &mut self,
        data: &ManagementAccessData,
        opts: RegisterOptions,
    ) -> Result<RegisterResult, ProvisionerError> {
        let r = self.inner.register(data, opts)?;
        if self.new_node {
            self.note(Step::plain("register", "register BMC"));
        } else if opts.credentials_changed {
            self.note(Step::plain("register", "update BMC credentials"));
        }
        Ok(r)
    }

    fn inspect_hardware(
        &mut self,
        data: &InspectData,
        opts: InspectOptions,
    ) -> Result<InspectResult, ProvisionerError> {
        let r = self.inner.inspect_hardware(data, opts)?;
        if r.started {
            self.note(Step::plain("inspect", "inspect hardware"));
        }
        Ok(r)
    }

    fn prepare(
        &mut self,
        data: &PrepareData,
        opts: StepOptions,
    ) -> Result<StepResult, ProvisionerError> {
        let r = self.inner.prepare(data, opts)?;
        if opts.unprepared {
            let raid = data.target_raid_config.is_some()
                && data.target_raid_config != data.actual_raid_config;
            let what = changes(
                raid,
                !data.target_firmware_settings.is_empty(),
                !data.target_firmware_components.is_empty(),
            );
            // RAID's clean steps delete the volumes (and erase the disks' metadata); BIOS
            // settings and firmware updates leave the disks as they are.
            self.note(Step {
                destructive: raid,
                ..Step::plain("prepare", what)
            });
        }
        Ok(r)
    }

    fn service(
        &mut self,
        data: &ServicingData,
        opts: StepOptions,
    ) -> Result<StepResult, ProvisionerError> {
        let r = self.inner.service(data, opts)?;
        if opts.unprepared {
            let what = changes(
                false,
                !data.target_firmware_settings.is_empty(),
                !data.target_firmware_components.is_empty(),
            );
            // Servicing applies BIOS settings and firmware updates only: no disk is erased.
            self.note(Step::plain("service", format!("service: {what}")));
        }
        Ok(r)
    }

    fn provision(
        &mut self,
        data: &ProvisionData,
        opts: ProvisionOptions,
    ) -> Result<OpResult, ProvisionerError> {
        let r = self.inner.provision(data, opts)?;
        // Writing an image overwrites the disk, a custom deploy may; a live ISO boots from
        // virtual media and writes nothing.
        let step = match &data.custom_deploy {
            Some(c) if !c.method.is_empty() => {
                Step::destructive("provision", format!("custom deploy {}", c.method))
            }
            _ if data.image.format == "live-iso" => {
                Step::plain("provision", format!("boot live ISO {}", data.image.url))
            }
            _ => Step::destructive("provision", format!("deploy image {}", data.image.url)),
        };
        self.note(step);
        Ok(r)
    }

    fn deprovision(&mut self, opts: DeprovisionOptions) -> Result<OpResult, ProvisionerError> {
        // Ironic's metadata cleaning erases the disks; with it disabled the image stays.
        let step = match opts.automated_cleaning_mode {
            AutomatedCleaningMode::Disabled => {
                Step::plain("deprovision", "deprovision (no disk cleaning)")
            }
            _ => Step::destructive("deprovision", "deprovision and clean disks"),
        };
        let r = self.inner.deprovision(opts)?;
        self.note(step);
        Ok(r)
    }

    fn delete(&mut self) -> Result<OpResult, ProvisionerError> {
        let r = self.inner.delete()?;
        self.note(Step::destructive("delete", "remove from the provisioner"));
        Ok(r)
    }

    fn detach(&mut self, opts: DetachOptions) -> Result<OpResult, ProvisionerError> {
        let r = self.inner.detach(opts)?;
        self.note(Step::plain("detach", "detach from the provisioner"));
        Ok(r)
    }

    fn power_on(&mut self, opts: PowerOnOptions) -> Result<OpResult, ProvisionerError> {
        let r = self.inner.power_on(opts)?;
        if r.dirty {
            self.note(Step::plain("powerOn", "power on"));
        }
        Ok(r)
    }

    fn power_off(&mut self, opts: PowerOffOptions) -> Result<OpResult, ProvisionerError> {
        let r = self.inner.power_off(opts)?;
        if r.dirty {
            self.note(Step::plain("powerOff", "power off"));
        }
        Ok(r)
    }

    fn create_bmc_event_subscription(
        &mut self,
        subscription: &bmh_api::BmcEventSubscription,
        http_headers: &[BTreeMap<String, String>],
    ) -> Result<Option<String>, ProvisionerError> {
        let id = self
            .inner
            .create_bmc_event_subscription(subscription, http_headers)?;
        self.note(Step::plain(
            "createBMCEventSubscription",
            format!("subscribe {} to BMC events", subscription.spec.destination),
        ));
        Ok(id)
    }

    fn delete_bmc_event_subscription(
        &mut self,
        subscription: &bmh_api::BmcEventSubscription,
    ) -> Result<bool, ProvisionerError> {
        let removed = self.inner.delete_bmc_event_subscription(subscription)?;
        self.note(Step::plain(
            "deleteBMCEventSubscription",
            format!(
                "remove the BMC event subscription of {}",
                subscription.spec.destination
            ),
        ));
        Ok(removed)
    }

    fn attach_data_image(&mut self, url: &str) -> Result<(), ProvisionerError> {
        self.inner.attach_data_image(url)?;
        self.note(Step::plain(
            "attachDataImage",
            format!("attach data image {url}"),
        ));
        Ok(())
    }

    fn detach_data_image(&mut self) -> Result<(), ProvisionerError> {
        self.inner.detach_data_image()?;
        self.note(Step::plain("detachDataImage", "detach data image"));
        Ok(())
    }
}
