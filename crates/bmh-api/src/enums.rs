//! The enumerations of `baremetalhost_types.go`.

use crate::string_enum;

string_enum!(
    /// `status.provisioning.state`. The CRD has no enum for it, so unknown strings are kept.
    ProvisioningState {
        None = "",
        Unmanaged = "unmanaged",
        Registering = "registering",
        MatchProfile = "match profile",
        Preparing = "preparing",
        Ready = "ready",
        Available = "available",
        Provisioning = "provisioning",
        Provisioned = "provisioned",
        ExternallyProvisioned = "externally provisioned",
        Deprovisioning = "deprovisioning",
        Inspecting = "inspecting",
        PoweringOffBeforeDelete = "powering off before delete",
        Deleting = "deleting",
    }
);

string_enum!(
    /// `status.operationalStatus`.
    OperationalStatus {
        Empty = "",
        Ok = "OK",
        Discovered = "discovered",
        Error = "error",
        Delayed = "delayed",
        Detached = "detached",
        Servicing = "servicing",
    }
);

string_enum!(
    /// `status.errorType`.
    ErrorType {
        None = "",
        ProvisionedRegistrationError = "provisioned registration error",
        RegistrationError = "registration error",
        InspectionError = "inspection error",
        PreparationError = "preparation error",
        ProvisioningError = "provisioning error",
        PowerManagementError = "power management error",
        DetachError = "detach error",
        ServicingError = "servicing error",
    }
);

string_enum!(
    /// `spec.bootMode`.
    BootMode {
        Unset = "",
        Uefi = "UEFI",
        UefiSecureBoot = "UEFISecureBoot",
        Legacy = "legacy",
    }
);

string_enum!(
    /// `spec.inspectionMode`.
    InspectionMode {
        Unset = "",
        Disabled = "disabled",
        Agent = "agent",
        Fast = "fast",
    }
);

string_enum!(
    /// `spec.automatedCleaningMode` (CRD default `metadata`).
    AutomatedCleaningMode {
        Unset = "",
        Metadata = "metadata",
        Disabled = "disabled",
    }
);

string_enum!(
    /// `spec.image.checksumType`.
    ChecksumType {
        Unset = "",
        Md5 = "md5",
        Sha256 = "sha256",
        Sha512 = "sha512",
        Auto = "auto",
    }
);

string_enum!(
    /// Reboot mode in the reboot annotation's JSON value.
    RebootMode {
        Unset = "",
        Hard = "hard",
        Soft = "soft",
    }
);

macro_rules! default_to {
    ($($t:ident => $v:ident),+ $(,)?) => {
        $(impl Default for $t { fn default() -> Self { Self::$v } })+
    };
}
default_to!(
    ProvisioningState => None,
    OperationalStatus => Empty,
    ErrorType => None,
    BootMode => Unset,
    InspectionMode => Unset,
    AutomatedCleaningMode => Unset,
    ChecksumType => Unset,
    RebootMode => Unset,
);

impl ProvisioningState {
    pub fn is_none(&self) -> bool {
        *self == Self::None
    }
}

impl OperationalStatus {
    pub fn is_empty(&self) -> bool {
        *self == Self::Empty
    }
}

impl ErrorType {
    pub fn is_none(&self) -> bool {
        *self == Self::None
    }
}

impl BootMode {
    pub fn is_unset(&self) -> bool {
        *self == Self::Unset
    }
}

impl InspectionMode {
    pub fn is_unset(&self) -> bool {
        *self == Self::Unset
    }
}

impl AutomatedCleaningMode {
    pub fn is_unset(&self) -> bool {
        *self == Self::Unset
    }
}

impl ChecksumType {
    pub fn is_unset(&self) -> bool {
        *self == Self::Unset
    }
}
