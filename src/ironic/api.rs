//! Typed calls of the Ironic REST API used by the provisioner (spec 2.7). Each returns the
//! decoded answer or an [`IronicError`] whose kind tells 404/409/400 apart.

use reqwest::Method;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::client::{IronicClient, IronicError, IronicErrorKind};
use super::types::{
    Conductor, Driver, InterfaceValidation, Node, NodeInventory, NodePatch, Port,
    ProvisionStateRequest,
};

/// Fields BMO lists nodes with for the capacity count.
pub const CAPACITY_FIELDS: &[&str] = &["uuid", "name", "provision_state", "boot_interface"];
/// Fields of the node watch's shared listing: what the state machine decides on, `reservation`,
/// `provision_updated_at`, and what inspection and deployment rewrite (plus `health` if known).
pub const WATCH_FIELDS: &[&str] = &[
    "uuid",
    "name",
    "provision_state",
    "target_provision_state",
    "power_state",
    "target_power_state",
    "last_error",
    "maintenance",
    "fault",
    "reservation",
    "inspection_finished_at",
    "boot_interface",
    "provision_updated_at",
    "properties",
    "instance_info",
    "instance_uuid",
    // What registration and the handlers compare before they PATCH: an edit made behind
    // bmhctl's back is seen as BMO's next GET would see it.
    "driver_info",
    "automated_clean",
    "network_data",
    "deploy_interface",
    "inspect_interface",
    "raid_interface",
];
/// Ironic's largest page (`[api]max_limit`); a larger `limit` is cut to it.
pub const MAX_PAGE: u32 = 1000;
/// Fields BMO lists ports with.
pub const PORT_FIELDS: &[&str] = &["node_uuid", "uuid", "address"];

fn to_value<T: Serialize>(v: &T) -> Result<Value, IronicError> {
    serde_json::to_value(v)
        .map_err(|e| IronicError::decode(format!("cannot encode request body: {e}")))
}

fn seg(s: &str) -> String {
    // node idents are UUIDs or names (RFC 3986 unreserved characters); encode the rest
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl IronicClient {
    /// A call on `nodes/{uuid}<sub>` whose answer has nothing to read.
    fn node_action(
        &self,
        method: Method,
        uuid: &str,
        sub: &str,
        body: Option<&Value>,
        ok: &[u16],
    ) -> Result<(), IronicError> {
        let path = format!("nodes/{}{sub}", seg(uuid));
        self.request(method, &path, &[], body, ok).map(drop)
    }

    fn get_json<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<T, IronicError> {
        self.request(Method::GET, path, query, None, &[200])?.json()
    }

    /// `GET /v1/PATH?QUERY`, all pages (following `next`), collecting the `key` arrays.
    pub fn list_all<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
        key: &str,
    ) -> Result<Vec<T>, IronicError> {
        let mut url = self.url(path)?;
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        let mut out = Vec::new();
        // guard against a server looping on the same marker
        for _ in 0..10_000 {
            let page: Value = self
                .request_url(Method::GET, url.clone(), None, &[200])?
                .json()?;
            let items = page.get(key).cloned().unwrap_or(Value::Array(vec![]));
            let items: Vec<T> = serde_json::from_value(items)
                .map_err(|e| IronicError::decode(format!("invalid {key} list from Ironic: {e}")))?;
            let empty = items.is_empty();
            out.extend(items);
            let Some(next) = page
                .get("next")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
            else {
                break;
            };
            if empty {
                break;
            }
            // `next` carries Ironic's idea of its public URL: only its query is taken.
            let next = reqwest::Url::parse(next)
                .or_else(|_| self.url(next))
                .map_err(|e| IronicError::decode(format!("invalid next link {next:?}: {e}")))?;
            let mut u = self.url(path)?;
            u.set_query(next.query());
            if u == url {
                break;
            }
            url = u;
        }
        Ok(out)
    }

    /// `GET /v1/nodes/{uuid-or-name}`.
    pub fn get_node(&self, ident: &str) -> Result<Node, IronicError> {
        self.get_json(&format!("nodes/{}", seg(ident)), &[])
    }

    /// `GET /v1/nodes/{ident}` read for its lock: `reservation` and `updated_at` (which no
    /// `fields` may name).
    pub fn node_lock(&self, ident: &str) -> Result<(Option<String>, Option<String>), IronicError> {
        #[derive(serde::Deserialize, Default)]
        #[serde(default)]
        struct Lock {
            reservation: Option<String>,
            updated_at: Option<String>,
        }
        let l: Lock = self.get_json(&format!("nodes/{}", seg(ident)), &[])?;
        Ok((l.reservation, l.updated_at))
    }

    /// `GET /v1/conductors?fields=hostname,alive`, all pages (API 1.49 and later).
    pub fn list_conductors(&self) -> Result<Vec<Conductor>, IronicError> {
        self.list_all("conductors", &[("fields", "hostname,alive")], "conductors")
    }

    /// `GET /v1/nodes?fields=…&limit=…`, all pages. Empty `fields` lists full nodes.
    pub fn list_nodes(
        &self,
        fields: &[&str],
        limit: Option<u32>,
    ) -> Result<Vec<Node>, IronicError> {
        let (f, l) = (fields.join(","), limit.map(|l| l.to_string()));
        let f = (!fields.is_empty()).then_some(f.as_str());
        let q: Vec<(&str, &str)> = [("fields", f), ("limit", l.as_deref())]
            .into_iter()
            .filter_map(|(k, v)| Some((k, v?)))
            .collect();
        self.list_all("nodes", &q, "nodes")
    }

    /// `GET /v1/nodes/detail?sort_key=updated_at&sort_dir=desc&limit=N`, one page: the nodes
    /// saved last, newest first (whole nodes: Ironic refuses `updated_at` in `fields`). Where the
    /// database sorts a never-saved node (`updated_at` null) depends on it: first on PostgreSQL.
    pub fn recently_saved_nodes(&self, limit: u32) -> Result<Vec<Node>, IronicError> {
        let limit = limit.to_string();
        let q = [
            ("sort_key", "updated_at"),
            ("sort_dir", "desc"),
            ("limit", limit.as_str()),
        ];
        #[derive(serde::Deserialize)]
        struct Page {
            #[serde(default)]
            nodes: Vec<Node>,
        }
        // Decoded straight into nodes: a page of whole nodes is large, and it comes every second.
        let page: Page = self.get_json("nodes/detail", &q)?;
        Ok(page.nodes)
    }

    /// `POST /v1/nodes` (201).
    pub fn create_node<B: Serialize>(&self, body: &B) -> Result<Node, IronicError> {
        let body = to_value(body)?;
        self.request(Method::POST, "nodes", &[], Some(&body), &[201])?
            .json()
    }

    /// `PATCH /v1/nodes/{uuid}` (200): the updated node; an empty patch sends nothing.
    pub fn patch_node(&self, uuid: &str, patch: &NodePatch) -> Result<Option<Node>, IronicError> {
        if patch.is_empty() {
            return Ok(None);
        }
        let (path, body) = (format!("nodes/{}", seg(uuid)), patch.to_json());
        let resp = self.request(Method::PATCH, &path, &[], Some(&body), &[200])?;
        resp.json().map(Some)
    }

    /// `DELETE /v1/nodes/{uuid}` (202/204).
    pub fn delete_node(&self, uuid: &str) -> Result<(), IronicError> {
        self.node_action(Method::DELETE, uuid, "", None, &[202, 204])
    }

    /// `PUT /v1/nodes/{uuid}/states/provision` (202).
    pub fn set_provision_state(
        &self,
        uuid: &str,
        req: &ProvisionStateRequest,
    ) -> Result<(), IronicError> {
        let body = to_value(req)?;
        self.node_action(Method::PUT, uuid, "/states/provision", Some(&body), &[202])
    }

    /// `PUT /v1/nodes/{uuid}/states/power` (202), with `timeout` (seconds) when given.
    pub fn set_power_state(
        &self,
        uuid: &str,
        target: &str,
        timeout: Option<u32>,
    ) -> Result<(), IronicError> {
        let mut body = json!({ "target": target });
        if let Some(t) = timeout {
            body["timeout"] = json!(t);
        }
        self.node_action(Method::PUT, uuid, "/states/power", Some(&body), &[202])
    }

    /// `PUT /v1/nodes/{uuid}/states/raid` (204).
    pub fn set_raid_config(&self, uuid: &str, logical_disks: &[Value]) -> Result<(), IronicError> {
        let body = json!({ "logical_disks": logical_disks });
        self.node_action(Method::PUT, uuid, "/states/raid", Some(&body), &[202, 204])
    }

    /// `PUT /v1/nodes/{uuid}/maintenance` (202), `reason` omitted when empty.
    pub fn set_maintenance(&self, uuid: &str, reason: &str) -> Result<(), IronicError> {
        let mut body = json!({});
        if !reason.is_empty() {
            body["reason"] = json!(reason);
        }
        self.node_action(Method::PUT, uuid, "/maintenance", Some(&body), &[202])
    }

    /// `DELETE /v1/nodes/{uuid}/maintenance` (202).
    pub fn unset_maintenance(&self, uuid: &str) -> Result<(), IronicError> {
        self.node_action(Method::DELETE, uuid, "/maintenance", None, &[202])
    }

    /// `GET /v1/nodes/{uuid}/validate`: interface name → result.
    pub fn validate_node(
        &self,
        uuid: &str,
    ) -> Result<std::collections::BTreeMap<String, InterfaceValidation>, IronicError> {
        self.get_json(&format!("nodes/{}/validate", seg(uuid)), &[])
    }

    /// `GET /v1/nodes/{uuid}/inventory` (404 when no inspection data).
    pub fn get_inventory(&self, uuid: &str) -> Result<NodeInventory, IronicError> {
        self.get_json(&format!("nodes/{}/inventory", seg(uuid)), &[])
    }

    /// `GET /v1/ports?<filter>&fields=…` (filter: `address` or `node_uuid`), all pages.
    pub fn list_ports(&self, filter: (&str, &str)) -> Result<Vec<Port>, IronicError> {
        let fields = PORT_FIELDS.join(",");
        self.list_all("ports", &[filter, ("fields", &fields)], "ports")
    }

    /// `GET /v1/ports?fields=node_uuid,uuid,address&limit=1000`, following `next`: every port.
    pub fn list_ports_paged(&self) -> Result<Vec<Port>, IronicError> {
        let fields = PORT_FIELDS.join(",");
        let limit = MAX_PAGE.to_string();
        self.list_all("ports", &[("fields", &fields), ("limit", &limit)], "ports")
    }

    /// `GET /v1/ports?fields=…,created_at&sort_key=created_at&sort_dir=desc&limit=N`, one
    /// page: the ports created last, newest first.
    pub fn recently_created_ports(&self, limit: u32) -> Result<Vec<Port>, IronicError> {
        let fields = [PORT_FIELDS, &["created_at"]].concat().join(",");
        let limit = limit.to_string();
        let q = [
            ("fields", fields.as_str()),
            ("sort_key", "created_at"),
            ("sort_dir", "desc"),
            ("limit", limit.as_str()),
        ];
        #[derive(serde::Deserialize)]
        struct Page {
            #[serde(default)]
            ports: Vec<Port>,
        }
        let page: Page = self.get_json("ports", &q)?;
        Ok(page.ports)
    }

    /// `POST /v1/ports` (201).
    pub fn create_port(
        &self,
        node_uuid: &str,
        address: &str,
        pxe_enabled: bool,
    ) -> Result<Port, IronicError> {
        let body =
            json!({ "node_uuid": node_uuid, "address": address, "pxe_enabled": pxe_enabled });
        self.request(Method::POST, "ports", &[], Some(&body), &[201])?
            .json()
    }

    /// `GET /v1/nodes/{uuid}/bios`, or `?detail=true` with the attribute schema.
    pub fn get_bios(&self, uuid: &str, detail: bool) -> Result<Vec<Value>, IronicError> {
        let q: &[(&str, &str)] = if detail { &[("detail", "true")] } else { &[] };
        let doc: Value = self.get_json(&format!("nodes/{}/bios", seg(uuid)), q)?;
        Ok(array_of(&doc, "bios"))
    }

    /// `GET /v1/nodes/{uuid}/firmware`.
    pub fn get_firmware(&self, uuid: &str) -> Result<Vec<Value>, IronicError> {
        let doc: Value = self.get_json(&format!("nodes/{}/firmware", seg(uuid)), &[])?;
        Ok(array_of(&doc, "firmware"))
    }

    /// `GET /v1/nodes/{uuid}/vmedia` (1.93): the attached virtual media.
    pub fn get_vmedia(&self, uuid: &str) -> Result<Vec<Value>, IronicError> {
        let doc: Value = self.get_json(&format!("nodes/{}/vmedia", seg(uuid)), &[])?;
        Ok(match doc {
            Value::Array(items) => items,
            other => array_of(&other, "vmedia"),
        })
    }

    /// `POST /v1/nodes/{uuid}/vmedia` with a CD-ROM image (204).
    pub fn attach_vmedia(&self, uuid: &str, image_url: &str) -> Result<(), IronicError> {
        let body = json!({ "device_type": "cdrom", "image_url": image_url });
        self.node_action(Method::POST, uuid, "/vmedia", Some(&body), &[200, 202, 204])
    }

    /// `DELETE /v1/nodes/{uuid}/vmedia?device_types=cdrom` (204).
    pub fn detach_vmedia(&self, uuid: &str) -> Result<(), IronicError> {
        let path = format!("nodes/{}/vmedia", seg(uuid));
        let query = [("device_types", "cdrom")];
        self.request(Method::DELETE, &path, &query, None, &[200, 202, 204])
            .map(drop)
    }

    /// `POST /v1/nodes/{uuid}/vendor_passthru?method=<method>` with a JSON body.
    pub fn vendor_passthru(
        &self,
        uuid: &str,
        method: &str,
        http_method: Method,
        body: &Value,
    ) -> Result<Value, IronicError> {
        let path = format!("nodes/{}/vendor_passthru", seg(uuid));
        let query = [("method", method)];
        let resp = self.request(http_method, &path, &query, Some(body), &[200, 202, 204])?;
        if resp.body.is_empty() {
            Ok(Value::Null)
        } else {
            resp.json()
        }
    }

    /// `GET /v1/drivers`, uncached.
    pub fn list_drivers(&self) -> Result<Vec<Driver>, IronicError> {
        self.list_all("drivers", &[], "drivers")
    }

    /// The drivers, fetched once per client (see [`IronicClient::reset_cache`]).
    pub fn drivers(&self) -> Result<Vec<Driver>, IronicError> {
        let mut guard = crate::mutex::lock(&self.drivers_cache);
        if let Some(d) = &*guard {
            return Ok(d.clone());
        }
        Ok(guard.insert(self.list_drivers()?).clone())
    }

    /// BMO's readiness probe (spec 1.6): version discovery, then at least one driver.
    pub fn check_ready(&self) -> Result<(), IronicError> {
        self.api_version()?;
        if self.drivers()?.is_empty() {
            return Err(IronicError::new(
                IronicErrorKind::Http,
                "ironic has no drivers loaded yet",
            ));
        }
        Ok(())
    }
}

fn array_of(doc: &Value, key: &str) -> Vec<Value> {
    doc.get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}
