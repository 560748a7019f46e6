//! Servicing as BMO's `Service` reports it.

use super::*;

/// BMO's `abortServicing` returns the `started` of `tryChangeNodeProvisionState`: true once
/// Ironic accepted the abort (of a failed or waiting servicing whose firmware specs were
/// removed), false when it refused it.
#[test]
fn an_accepted_servicing_abort_reports_started() {
    for node_state in ["service failed", "service wait"] {
        let fake = FakeIronic::start();
        let shared = fake.shared();
        fake.node_in(node_state, json!({}));
        let m = fake.mark();
        let r = prov(&shared)
            .service(&ServicingData::default(), StepOptions::default())
            .unwrap();
        assert!(r.started, "{node_state}: {r:?}");
        assert_requeue(&r.result, 3);
        assert_eq!(fake.provision_targets_since(m), ["abort"]);

        fake.fail(
            "PUT",
            &format!("nodes/{UUID}/states/provision"),
            409,
            "locked",
        );
        let r = prov(&shared)
            .service(&ServicingData::default(), StepOptions::default())
            .unwrap();
        assert!(!r.started, "{node_state}: {r:?}");
    }
}
