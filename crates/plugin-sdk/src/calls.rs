//! The provisioner calls, declared once in [`provisioner_calls!`] and generated from there.

use crate::ProvisionerError;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The table: docs, the `ProvisionerCall` variant with its wire fields, the trait method.
/// A method returning a plain value cannot fail: a failed call answers its default.
macro_rules! provisioner_calls {
    ($generate:ident $({ $($head:tt)* })?) => {
        $generate! {
            { $($($head)*)? }

            /// Create or update the node, prove BMC access, make it manageable; answers its ID.
            Register { data: ManagementAccessData, #[serde(flatten)] opts: RegisterOptions }
            fn register(&mut self, data: &ManagementAccessData, opts: RegisterOptions)
                -> Result<RegisterResult, ProvisionerError>;

            /// The image formats to boot for inspection and deployment; `None`: no image needed.
            PreprovisioningImageFormats
            fn preprovisioning_image_formats(&mut self)
                -> Result<Option<Vec<ImageFormat>>, ProvisionerError> { Ok(None) }

            /// Inspect the hardware: `started` on launch, `details` when finished.
            InspectHardware { data: InspectData, #[serde(flatten)] opts: InspectOptions }
            fn inspect_hardware(&mut self, data: &InspectData, opts: InspectOptions)
                -> Result<InspectResult, ProvisionerError>;

            /// A cheap read of the power state.
            UpdateHardwareState
            fn update_hardware_state(&mut self) -> Result<HardwareState, ProvisionerError>;

            /// Take over a host that is already provisioned or being worked on.
            Adopt { data: AdoptData, #[serde(flatten)] opts: AdoptOptions }
            fn adopt(&mut self, data: &AdoptData, opts: AdoptOptions)
                -> Result<OpResult, ProvisionerError>;

            /// Apply the manual cleaning steps (RAID, firmware): `started` on launch.
            Prepare { data: PrepareData, #[serde(flatten)] opts: StepOptions }
            fn prepare(&mut self, data: &PrepareData, opts: StepOptions)
                -> Result<StepResult, ProvisionerError>;

            /// Apply the servicing steps to a provisioned host: `started` on launch.
            Service { data: ServicingData, #[serde(flatten)] opts: StepOptions }
            fn service(&mut self, data: &ServicingData, opts: StepOptions)
                -> Result<StepResult, ProvisionerError>;

            /// Write the image and boot it.
            Provision { data: ProvisionData, #[serde(flatten)] opts: ProvisionOptions }
            fn provision(&mut self, data: &ProvisionData, opts: ProvisionOptions)
                -> Result<OpResult, ProvisionerError>;

            /// Remove the image (and clean the disks, per the cleaning mode).
            Deprovision { #[serde(flatten)] opts: DeprovisionOptions }
            fn deprovision(&mut self, opts: DeprovisionOptions)
                -> Result<OpResult, ProvisionerError>;

            /// Forget the host: remove it from the backend.
            Delete
            fn delete(&mut self) -> Result<OpResult, ProvisionerError>;

            /// Like delete, but non-disruptive unless `force`.
            Detach { #[serde(flatten)] opts: DetachOptions }
            fn detach(&mut self, opts: DetachOptions) -> Result<OpResult, ProvisionerError>;

            /// Power the host on.
            PowerOn { #[serde(flatten)] opts: PowerOnOptions }
            fn power_on(&mut self, opts: PowerOnOptions) -> Result<OpResult, ProvisionerError>;

            /// Power the host off.
            PowerOff { #[serde(flatten)] opts: PowerOffOptions }
            fn power_off(&mut self, opts: PowerOffOptions) -> Result<OpResult, ProvisionerError>;

            /// Whether a (de)provisioning slot is free for this host.
            HasCapacity
            fn has_capacity(&mut self) -> Result<bool, ProvisionerError>;

            /// The BIOS settings (and their schema when asked); none by default.
            GetFirmwareSettings { #[serde(flatten)] opts: FirmwareSettingsOptions }
            fn get_firmware_settings(&mut self, opts: FirmwareSettingsOptions)
                -> Result<FirmwareSettings, ProvisionerError> {
                let _ = opts;
                Ok(FirmwareSettings::default())
            }

            /// The firmware components and their versions; none by default.
            GetFirmwareComponents
            fn get_firmware_components(&mut self)
                -> Result<Vec<FirmwareComponentStatus>, ProvisionerError> { Ok(Vec::new()) }

            /// Superseded by `create_bmc_event_subscription`; bmhctl never sends it.
            AddBmcEventSubscription {
                subscription: serde_json::Value,
                http_headers: Vec<std::collections::BTreeMap<String, String>>
            }
            fn add_bmc_event_subscription(
                &mut self,
                subscription: &serde_json::Value,
                http_headers: &[std::collections::BTreeMap<String, String>]
            ) -> Result<OpResult, ProvisionerError> {
                let _ = (subscription, http_headers);
                Ok(OpResult::done())
            }

            /// Superseded by `delete_bmc_event_subscription`; bmhctl never sends it.
            RemoveBmcEventSubscription { subscription: serde_json::Value }
            fn remove_bmc_event_subscription(&mut self, subscription: &serde_json::Value)
                -> Result<OpResult, ProvisionerError> {
                let _ = subscription;
                Ok(OpResult::done())
            }

            /// Makes the subscription on the BMC; answers its ID (`None`: not supported).
            CreateBmcEventSubscription {
                subscription: bmh_api::BmcEventSubscription,
                http_headers: Vec<std::collections::BTreeMap<String, String>>
            }
            fn create_bmc_event_subscription(
                &mut self,
                subscription: &bmh_api::BmcEventSubscription,
                http_headers: &[std::collections::BTreeMap<String, String>]
            ) -> Result<Option<String>, ProvisionerError> {
                let _ = (subscription, http_headers);
                Ok(None)
            }

            /// Removes the subscription from the BMC: `true` once done (`false`: not supported).
            DeleteBmcEventSubscription { subscription: bmh_api::BmcEventSubscription }
            fn delete_bmc_event_subscription(
                &mut self,
                subscription: &bmh_api::BmcEventSubscription
            ) -> Result<bool, ProvisionerError> {
                let _ = subscription;
                Ok(false)
            }

            /// Whether a data image is attached; `NodeIsBusy` while the node is locked.
            GetDataImageStatus
            fn get_data_image_status(&mut self) -> Result<bool, ProvisionerError> {
                Err(crate::data_images_not_supported())
            }

            /// Attach the data image at `url` as virtual media (a CD). Not supported by default.
            AttachDataImage { url: String }
            fn attach_data_image(&mut self, url: &str) -> Result<(), ProvisionerError> {
                let _ = url;
                Err(crate::data_images_not_supported())
            }

            /// Detach the data image. Not supported by default.
            DetachDataImage
            fn detach_data_image(&mut self) -> Result<(), ProvisionerError> {
                Err(crate::data_images_not_supported())
            }

            /// Whether the BMC reports a power failure; no by default.
            HasPowerFailure
            fn has_power_failure(&mut self) -> bool { false }

            /// `OK`, `Warning`, `Critical`, or empty when unknown (the default).
            GetHealth
            fn get_health(&mut self) -> String { String::new() }

            /// State to persist and hand back in [`HostData::provisioner_state`]; `None`: none.
            PersistentState
            fn persistent_state(&self) -> Option<serde_json::Value> { None }
        }
    };
}
pub(crate) use provisioner_calls;

/// The [`Provisioner`](crate::Provisioner) trait: `{ <docs> pub trait Provisioner: Send }`.
macro_rules! provisioner_trait {
    (
        { $($head:tt)* }
        $(
            $(#[$doc:meta])*
            $variant:ident $({ $($(#[$fattr:meta])* $field:ident : $fty:ty),* })?
            fn $name:ident ($($params:tt)*) -> $ret:ty $($default:block)? $(;)?
        )*
    ) => {
        $($head)* {
            $( $crate::calls::trait_method! { $(#[$doc])* fn $name($($params)*) -> $ret; [$($default)?] } )*

            /// [`Provisioner::persistent_state`] as a shared value, reused when unchanged.
            fn shared_persistent_state(&self) -> Option<std::sync::Arc<serde_json::Value>> {
                self.persistent_state().map(std::sync::Arc::new)
            }
        }
    };
}
pub(crate) use provisioner_trait;

macro_rules! trait_method {
    ($(#[$doc:meta])* fn $name:ident ($($params:tt)*) -> $ret:ty; []) => {
        $(#[$doc])*
        fn $name($($params)*) -> $ret;
    };
    ($(#[$doc:meta])* fn $name:ident ($($params:tt)*) -> $ret:ty; [$default:block]) => {
        $(#[$doc])*
        fn $name($($params)*) -> $ret $default
    };
}
pub(crate) use trait_method;

/// The call enum, `{ <docs and attributes> pub enum ProvisionerCall }`, and
/// `impl Provisioner for RemoteProvisioner<T>`: every method sent through `T`.
macro_rules! call_enum {
    (
        { $($head:tt)* }
        $(
            $(#[$doc:meta])*
            $variant:ident $({ $($(#[$fattr:meta])* $field:ident : $fty:ty),* })?
            fn $name:ident (& $($recv:ident)+ $(, $arg:ident : $sig:ty)*) -> $ret:ty
                $($default:block)? $(;)?
        )*
    ) => {
        $($head)* {
            $(
                #[doc = concat!(
                    "[`Provisioner::", stringify!($name), "`](crate::Provisioner::",
                    stringify!($name), ")."
                )]
                $variant $({ $(
                    #[doc = concat!(
                        "The `", stringify!($field), "` argument of the method, set by the host."
                    )]
                    $(#[$fattr])* $field: $fty
                ),* })?,
            )*
        }

        impl<T: CallTransport> Provisioner for RemoteProvisioner<T> {
            $(
                fn $name(& $($recv)+ $(, $arg: $sig)*) -> $ret {
                    let call = ProvisionerCall::$variant
                        $({ $($field: $crate::calls::WireArg::to_wire($field)),* })?;
                    let transport = &$crate::calls::receiver!($($recv)+).transport;
                    <$ret as $crate::calls::CallOutput>::from_result(
                        transport.call(call),
                        |e| transport.call_failed(stringify!($name), e),
                    )
                }
            )*
        }
    };
}
pub(crate) use call_enum;

/// `dispatch(p, call)`: runs `call` on `p` and wraps its answer in a `Response` with `answer`.
macro_rules! dispatch_fn {
    (
        { $($head:tt)* }
        $(
            $(#[$doc:meta])*
            $variant:ident $({ $($(#[$fattr:meta])* $field:ident : $fty:ty),* })?
            fn $name:ident (& $($recv:ident)+ $(, $arg:ident : $sig:ty)*) -> $ret:ty
                $($default:block)? $(;)?
        )*
    ) => {
        /// Calls one provisioner method.
        pub fn dispatch(p: &mut dyn Provisioner, call: ProvisionerCall) -> Response {
            match call {
                $(
                    ProvisionerCall::$variant $({ $($field),* })? => answer(
                        $crate::calls::CallOutput::into_result(
                            p.$name($($crate::calls::WireArg::from_wire(&$arg)),*)
                        )
                    ),
                )*
            }
        }
    };
}
pub(crate) use dispatch_fn;

/// `self` of a method's receiver tokens (`mut self` or `self`), which the table writes; with
/// `inner of`, the forwarding trait's `inner()` or `inner_ref()` of it.
macro_rules! receiver {
    (mut $self:ident) => {
        $self
    };
    ($self:ident) => {
        $self
    };
    (inner of mut $self:ident) => {
        $self.inner()
    };
    (inner of $self:ident) => {
        $self.inner_ref()
    };
}
pub(crate) use receiver;

/// `impl Provisioner for ObservedProvisioner`: every method forwarded to `inner`, timed.
macro_rules! observed_impl {
    (
        { $($head:tt)* }
        $(
            $(#[$doc:meta])*
            $variant:ident $({ $($(#[$fattr:meta])* $field:ident : $fty:ty),* })?
            fn $name:ident (& $($recv:ident)+ $(, $arg:ident : $sig:ty)*) -> $ret:ty
                $($default:block)? $(;)?
        )*
    ) => {
        impl Provisioner for ObservedProvisioner {
            $(
                fn $name(& $($recv)+ $(, $arg: $sig)*) -> $ret {
                    let started = std::time::Instant::now();
                    let this = $crate::calls::receiver!($($recv)+);
                    let answer = this.inner.$name($($arg),*);
                    this.observer.observe(stringify!($name), started.elapsed());
                    answer
                }
            )*
        }
    };
}
pub(crate) use observed_impl;

/// The [`ForwardingProvisioner`](crate::ForwardingProvisioner) trait and its blanket impl:
/// `{ { <trait head> } { <trait methods by hand> } { <impl methods by hand> } }`.
macro_rules! forwarding_provisioner {
    (
        { { $($head:tt)* } { $($by_hand:tt)* } { $($impl_by_hand:tt)* } }
        $(
            $(#[$doc:meta])*
            $variant:ident $({ $($(#[$fattr:meta])* $field:ident : $fty:ty),* })?
            fn $name:ident (& $($recv:ident)+ $(, $arg:ident : $sig:ty)*) -> $ret:ty
                $($default:block)? $(;)?
        )*
    ) => {
        $($head)* {
            $($by_hand)*
            $(
                #[doc = concat!("[`Provisioner::", stringify!($name), "`](crate::Provisioner::",
                    stringify!($name), "), forwarded to `inner` by default.")]
                fn $name(& $($recv)+ $(, $arg: $sig)*) -> $ret {
                    $crate::calls::receiver!(inner of $($recv)+).$name($($arg),*)
                }
            )*
        }

        impl<T: ForwardingProvisioner> Provisioner for T {
            $($impl_by_hand)*
            $(
                fn $name(& $($recv)+ $(, $arg: $sig)*) -> $ret {
                    ForwardingProvisioner::$name($crate::calls::receiver!($($recv)+) $(, $arg)*)
                }
            )*
        }
    };
}
pub(crate) use forwarding_provisioner;

/// A method parameter and the `ProvisionerCall` field it travels in.
pub(crate) trait WireArg<'a, W>: Sized {
    /// The parameter, from the field of a received call (plugin side).
    fn from_wire(wire: &'a W) -> Self;
    /// The field, from the parameter (host side).
    fn to_wire(self) -> W;
}

/// By value: options structs.
impl<'a, T: Clone> WireArg<'a, T> for T {
    fn from_wire(wire: &'a T) -> Self {
        wire.clone()
    }
    fn to_wire(self) -> T {
        self
    }
}

impl<'a, T: Clone> WireArg<'a, T> for &'a T {
    fn from_wire(wire: &'a T) -> Self {
        wire
    }
    fn to_wire(self) -> T {
        self.clone()
    }
}

impl<'a> WireArg<'a, String> for &'a str {
    fn from_wire(wire: &'a String) -> Self {
        wire
    }
    fn to_wire(self) -> String {
        self.to_string()
    }
}

impl<'a, T: Clone> WireArg<'a, Vec<T>> for &'a [T] {
    fn from_wire(wire: &'a Vec<T>) -> Self {
        wire
    }
    fn to_wire(self) -> Vec<T> {
        self.to_vec()
    }
}

/// A method's return value and the `Ok` answer it travels as.
pub(crate) trait CallOutput: Sized {
    type Wire: Serialize + DeserializeOwned;
    /// The answer to send (plugin side).
    fn into_result(self) -> Result<Self::Wire, ProvisionerError>;
    /// The return value from a received answer; `failed` hears of errors it cannot carry.
    fn from_result(
        answer: Result<Self::Wire, ProvisionerError>,
        failed: impl FnOnce(ProvisionerError),
    ) -> Self;
}

impl<T: Serialize + DeserializeOwned> CallOutput for Result<T, ProvisionerError> {
    type Wire = T;
    fn into_result(self) -> Self {
        self
    }
    fn from_result(answer: Self, _: impl FnOnce(ProvisionerError)) -> Self {
        answer
    }
}

/// The methods that cannot fail: a failed call is reported and answers the default.
macro_rules! infallible_output {
    ($($t:ty),*) => {$(
        impl CallOutput for $t {
            type Wire = Self;
            fn into_result(self) -> Result<Self, ProvisionerError> {
                Ok(self)
            }
            fn from_result(
                answer: Result<Self, ProvisionerError>,
                failed: impl FnOnce(ProvisionerError),
            ) -> Self {
                answer.unwrap_or_else(|e| {
                    failed(e);
                    Self::default()
                })
            }
        }
    )*};
}
infallible_output!(bool, String, Option<serde_json::Value>);

#[cfg(test)]
mod tests {
    //! The generated proxy and dispatch, end to end: a `RemoteProvisioner` whose transport
    //! sends each call as JSON to `dispatch` on a recording provisioner, as the C ABI does.

    use crate::abi::{CallTransport, ProvisionerCall, RemoteProvisioner, Response};
    use crate::abi_plugin::dispatch;
    use crate::*;
    use bmh_api::{AutomatedCleaningMode, HardwareDetails, RebootMode};
    use serde::de::DeserializeOwned;
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};

    type Log = Arc<Mutex<Vec<String>>>;

    /// Logs each call with its arguments.
    struct Recorder(Log);

    impl Recorder {
        fn log(&self, line: String) -> Result<OpResult, ProvisionerError> {
            self.0.lock().unwrap().push(line);
            Ok(OpResult::in_progress(std::time::Duration::from_secs(1)))
        }
    }

    impl Provisioner for Recorder {
        fn register(
            &mut self,
            data: &ManagementAccessData,
            opts: RegisterOptions,
        ) -> Result<RegisterResult, ProvisionerError> {
            let result = self.log(format!("register {} {opts:?}", data.cpu_architecture))?;
            Ok(RegisterResult {
                result,
                provisioner_id: "id-1".into(),
            })
        }
        fn inspect_hardware(
            &mut self,
            data: &InspectData,
            opts: InspectOptions,
        ) -> Result<InspectResult, ProvisionerError> {
            let result = self.log(format!("inspect {} {opts:?}", data.cpu_architecture))?;
            Ok(InspectResult {
                result,
                started: true,
                details: Some(HardwareDetails {
                    ram_mebibytes: 1024,
                    ..Default::default()
                }),
            })
        }
        fn update_hardware_state(&mut self) -> Result<HardwareState, ProvisionerError> {
            Ok(HardwareState {
                powered_on: Some(true),
            })
        }
        fn adopt(
            &mut self,
            _: &AdoptData,
            opts: AdoptOptions,
        ) -> Result<OpResult, ProvisionerError> {
            self.log(format!("adopt {opts:?}"))
        }
        fn prepare(
            &mut self,
            _: &PrepareData,
            opts: StepOptions,
        ) -> Result<StepResult, ProvisionerError> {
            let result = self.log(format!("prepare {opts:?}"))?;
            Ok(StepResult {
                result,
                started: opts.unprepared,
            })
        }
        fn service(
            &mut self,
            _: &ServicingData,
            opts: StepOptions,
        ) -> Result<StepResult, ProvisionerError> {
            let result = self.log(format!("service {opts:?}"))?;
            Ok(StepResult {
                result,
                started: opts.unprepared,
            })
        }
        fn provision(
            &mut self,
            _: &ProvisionData,
            opts: ProvisionOptions,
        ) -> Result<OpResult, ProvisionerError> {
            self.log(format!("provision {opts:?}"))
        }
        fn deprovision(&mut self, opts: DeprovisionOptions) -> Result<OpResult, ProvisionerError> {
            self.log(format!("deprovision {opts:?}"))
        }
        fn delete(&mut self) -> Result<OpResult, ProvisionerError> {
            Err(ProvisionerError::NodeIsBusy)
        }
        fn detach(&mut self, opts: DetachOptions) -> Result<OpResult, ProvisionerError> {
            self.log(format!("detach {opts:?}"))
        }
        fn power_on(&mut self, opts: PowerOnOptions) -> Result<OpResult, ProvisionerError> {
            self.log(format!("power_on {opts:?}"))
        }
        fn power_off(&mut self, opts: PowerOffOptions) -> Result<OpResult, ProvisionerError> {
            self.log(format!("power_off {opts:?}"))
        }
        fn has_capacity(&mut self) -> Result<bool, ProvisionerError> {
            Ok(true)
        }
        fn add_bmc_event_subscription(
            &mut self,
            subscription: &serde_json::Value,
            http_headers: &[BTreeMap<String, String>],
        ) -> Result<OpResult, ProvisionerError> {
            self.log(format!("subscribe {subscription} {http_headers:?}"))
        }
        fn attach_data_image(&mut self, url: &str) -> Result<(), ProvisionerError> {
            self.log(format!("attach {url}")).map(drop)
        }
        fn get_health(&mut self) -> String {
            HEALTH_WARNING.into()
        }
    }

    /// Sends each call through JSON to `dispatch`, or fails every call when `down`.
    struct Loopback {
        target: Mutex<Recorder>,
        down: bool,
        failed: Log,
    }

    impl CallTransport for Loopback {
        fn call<T: DeserializeOwned>(&self, call: ProvisionerCall) -> Result<T, ProvisionerError> {
            if self.down {
                return Err(ProvisionerError::Other("plugin gone".into()));
            }
            let call = serde_json::from_str(&serde_json::to_string(&call).unwrap()).unwrap();
            match dispatch(&mut *self.target.lock().unwrap(), call) {
                Response::Ok(v) => Ok(serde_json::from_value(v).unwrap()),
                Response::Err(e) => Err(e),
            }
        }
        fn call_failed(&self, method: &'static str, error: ProvisionerError) {
            self.failed
                .lock()
                .unwrap()
                .push(format!("{method}: {error}"));
        }
    }

    fn remote(down: bool) -> (RemoteProvisioner<Loopback>, Log, Log) {
        let (log, failed) = (Log::default(), Log::default());
        let transport = Loopback {
            target: Mutex::new(Recorder(log.clone())),
            down,
            failed: failed.clone(),
        };
        (RemoteProvisioner::new(transport), log, failed)
    }

    #[test]
    fn arguments_and_answers_cross_intact() {
        let (mut p, log, failed) = remote(false);
        let busy = OpResult::in_progress(std::time::Duration::from_secs(1));
        let data = ManagementAccessData {
            cpu_architecture: "x86_64".into(),
            ..Default::default()
        };
        let opts = RegisterOptions {
            credentials_changed: true,
            restart_on_failure: false,
        };
        let r = p.register(&data, opts).unwrap();
        assert_eq!(
            (r.result, r.provisioner_id.as_str()),
            (busy.clone(), "id-1")
        );
        let opts = InspectOptions {
            restart_on_failure: false,
            refresh: true,
            force_reboot: true,
        };
        let r = p.inspect_hardware(&InspectData::default(), opts).unwrap();
        assert!(r.started && r.details.unwrap().ram_mebibytes == 1024);
        let opts = StepOptions {
            unprepared: true,
            restart_on_failure: true,
        };
        assert!(p.prepare(&PrepareData::default(), opts).unwrap().started);
        assert!(
            !p.service(&ServicingData::default(), StepOptions::default())
                .unwrap()
                .started
        );
        let restart = AdoptOptions {
            restart_on_failure: true,
        };
        p.adopt(&AdoptData::default(), restart).unwrap();
        p.provision(
            &ProvisionData::default(),
            ProvisionOptions { force_reboot: true },
        )
        .unwrap();
        let opts = DeprovisionOptions {
            restart_on_failure: true,
            automated_cleaning_mode: AutomatedCleaningMode::Disabled,
        };
        p.deprovision(opts).unwrap();
        p.detach(DetachOptions { force: true }).unwrap();
        p.power_on(PowerOnOptions { force: true }).unwrap();
        let opts = PowerOffOptions {
            mode: RebootMode::Soft,
            force: true,
            automated_cleaning_mode: AutomatedCleaningMode::Metadata,
        };
        assert_eq!(p.power_off(opts).unwrap(), busy);
        let headers = [BTreeMap::from([("k".to_string(), "v".to_string())])];
        p.add_bmc_event_subscription(&serde_json::json!({"d": 1}), &headers)
            .unwrap();
        p.attach_data_image("http://x/iso").unwrap();
        assert_eq!(
            *log.lock().unwrap(),
            [
                "register x86_64 RegisterOptions { credentials_changed: true, restart_on_failure: false }",
                "inspect  InspectOptions { restart_on_failure: false, refresh: true, force_reboot: true }",
                "prepare StepOptions { unprepared: true, restart_on_failure: true }",
                "service StepOptions { unprepared: false, restart_on_failure: false }",
                "adopt AdoptOptions { restart_on_failure: true }",
                "provision ProvisionOptions { force_reboot: true }",
                "deprovision DeprovisionOptions { restart_on_failure: true, automated_cleaning_mode: Disabled }",
                "detach DetachOptions { force: true }",
                "power_on PowerOnOptions { force: true }",
                "power_off PowerOffOptions { mode: Soft, force: true, automated_cleaning_mode: Metadata }",
                r#"subscribe {"d":1} [{"k": "v"}]"#,
                "attach http://x/iso",
            ]
        );
        // Defaults of the trait, and errors, come back as they are.
        assert_eq!(p.preprovisioning_image_formats().unwrap(), None);
        assert_eq!(
            p.get_firmware_settings(FirmwareSettingsOptions::default())
                .unwrap(),
            FirmwareSettings::default()
        );
        assert_eq!(p.delete(), Err(ProvisionerError::NodeIsBusy));
        assert_eq!(p.get_health(), HEALTH_WARNING);
        assert!(!p.has_power_failure());
        assert_eq!(p.persistent_state(), None);
        assert_eq!(
            p.get_data_image_status(),
            Err(crate::data_images_not_supported())
        );
        assert_eq!(
            p.detach_data_image(),
            Err(crate::data_images_not_supported())
        );
        assert!(failed.lock().unwrap().is_empty());
    }

    #[test]
    fn infallible_calls_that_fail_answer_their_default_and_are_reported() {
        let (mut p, _, failed) = remote(true);
        assert!(p.has_capacity().is_err());
        assert!(!p.has_power_failure());
        assert_eq!(p.get_health(), "");
        assert_eq!(p.persistent_state(), None);
        assert_eq!(
            *failed.lock().unwrap(),
            [
                "has_power_failure: plugin gone",
                "get_health: plugin gone",
                "persistent_state: plugin gone",
            ]
        );
    }
}
