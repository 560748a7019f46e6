//! The enumerations of `baremetalhost_types.go`.

use crate::string_enum;

string_enum!(
    /// `status.provisioning.state`. The CRD has no enum for it, so unknown strings are kept.
    ProvisioningState(is_none) {
        /// `StateNone`: a new host BMO has not handled yet.
        None = "",
        /// No BMC address or credentials name: the host cannot be registered.
        Unmanaged = "unmanaged",
        /// Registering the host with the provisioner and checking its BMC credentials.
        Registering = "registering",
        /// Legacy: BMO moves on to `preparing` at once (profiles are matched at registration).
        MatchProfile = "match profile",
        /// Applying RAID, firmware settings and firmware updates before the host becomes available.
        Preparing = "preparing",
        /// Deprecated name of `available`: handled the same, never entered anew.
        Ready = "ready",
        /// Registered, inspected and prepared: the host can be consumed.
        Available = "available",
        /// Deploying `spec.image` onto the host (or running `spec.customDeploy`).
        Provisioning = "provisioning",
        /// The image (or custom deploy) is on the host; BMO keeps its power matching `spec.online`.
        Provisioned = "provisioned",
        /// Deployed by something else (`spec.externallyProvisioned`): BMO only manages power.
        ExternallyProvisioned = "externally provisioned",
        /// Removing the image from the host's disks (with automated cleaning unless disabled).
        Deprovisioning = "deprovisioning",
        /// Running inspection to learn the host's hardware.
        Inspecting = "inspecting",
        /// The host is being deleted and is first powered off.
        PoweringOffBeforeDelete = "powering off before delete",
        /// Removing the host from the provisioner before its finalizer is dropped.
        Deleting = "deleting",
    }
);

string_enum!(
    /// `status.operationalStatus`.
    OperationalStatus(is_empty) {
        /// Not set yet (a new host).
        Empty = "",
        /// `OK`: configured correctly and manageable.
        Ok = "OK",
        /// Only partly configured (BMC details missing); set with state `unmanaged`.
        Discovered = "discovered",
        /// The last operation failed: see `errorType` and `errorMessage`.
        Error = "error",
        /// Waiting for provisioner capacity before inspecting, provisioning or deprovisioning.
        Delayed = "delayed",
        /// Detached from the provisioner by the `baremetalhost.metal3.io/detached` annotation.
        Detached = "detached",
        /// A provisioned host is being serviced (firmware settings or updates applied in place).
        Servicing = "servicing",
    }
);

string_enum!(
    /// `status.errorType`.
    ErrorType(is_none) {
        /// No error.
        None = "",
        /// Re-registering (adopting) an already provisioned host failed.
        ProvisionedRegistrationError = "provisioned registration error",
        /// Registration failed: BMC credentials or connection, registration, or hardware profile.
        RegistrationError = "registration error",
        /// Inspecting the host's hardware failed.
        InspectionError = "inspection error",
        /// Preparing (the cleaning steps for RAID and firmware) failed.
        PreparationError = "preparation error",
        /// Provisioning or deprovisioning failed, or the provisioning retry limit was reached.
        ProvisioningError = "provisioning error",
        /// Powering the host on or off failed.
        PowerManagementError = "power management error",
        /// Detaching the host from the provisioner failed (missing from BMO's CRD enum).
        DetachError = "detach error",
        /// Service steps on a provisioned host failed.
        ServicingError = "servicing error",
    }
);

string_enum!(
    /// `spec.bootMode`.
    BootMode(is_unset) {
        /// Not set: BMO uses `UEFI`.
        Unset = "",
        /// UEFI boot (BMO's default).
        Uefi = "UEFI",
        /// UEFI, with secure boot turned on once the host is provisioned.
        UefiSecureBoot = "UEFISecureBoot",
        /// BIOS boot, only for hardware whose UEFI does not work.
        Legacy = "legacy",
    }
);

string_enum!(
    /// `spec.inspectionMode`.
    InspectionMode(is_unset) {
        /// Not set: inspection runs as with `agent`.
        Unset = "",
        /// No inspection.
        Disabled = "disabled",
        /// Agent-based inspection: the host boots the inspection ramdisk.
        Agent = "agent",
        /// Out-of-band inspection through the BMC (Redfish): quick, no ramdisk, fewer details.
        Fast = "fast",
    }
);

string_enum!(
    /// `spec.automatedCleaningMode` (CRD default `metadata`).
    AutomatedCleaningMode(is_unset) {
        /// Not set: the CRD defaults it to `metadata`.
        Unset = "",
        /// Automated cleaning (of disk metadata) runs on provisioning and deprovisioning.
        Metadata = "metadata",
        /// Automated cleaning is skipped.
        Disabled = "disabled",
    }
);

string_enum!(
    /// `spec.image.checksumType`.
    ChecksumType(is_unset) {
        /// Not set: treated as `auto`.
        Unset = "",
        /// MD5.
        Md5 = "md5",
        /// SHA-256.
        Sha256 = "sha256",
        /// SHA-512.
        Sha512 = "sha512",
        /// Detect the algorithm from the checksum.
        Auto = "auto",
    }
);

string_enum!(
    /// Reboot mode in the reboot annotation's JSON value.
    RebootMode(is_unset) {
        /// Not set: a soft reboot.
        Unset = "",
        /// Hard reset: the power is cut without asking the OS.
        Hard = "hard",
        /// Soft: the OS is asked to shut down; BMO goes hard when that fails or after errors.
        Soft = "soft",
    }
);
