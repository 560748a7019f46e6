//! bmhctl: metal3 baremetal-operator's BareMetalHost behaviour without Kubernetes.
