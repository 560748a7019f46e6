//! Contexts end to end: the real binary with `BMHCTL_CONFIG` pointing at a config file of the
//! test, the real `ironic-provisioner.so` for the endpoint a context picks.

use crate::lab::{Lab, Run, host, secret};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

const CONFIG: &str = "\
# the test's contexts
contexts:
- name: lab
  ironicEndpoint: http://127.0.0.1:6385
  provisioner: ironic
  store: /srv/bmhctl/store
- name: local
  provisioner: fixture
  store: local-store
";

fn ironic_plugin() -> &'static Path {
    static BUILT: OnceLock<std::path::PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| crate::lab::cdylib("ironic-provisioner"))
}

/// A port nothing listens on: bound, then closed.
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// bmhctl in the lab with the lab's config file and none of the Ironic, store or context
/// settings of the caller's environment, then `envs`.
fn run(lab: &Lab, args: &[&str], envs: &[(&str, &str)]) -> Run {
    let plugins = lab.path("plugins");
    if !plugins.join("ironic-provisioner.so").exists() {
        std::fs::create_dir_all(&plugins).unwrap();
        std::fs::copy(ironic_plugin(), plugins.join("ironic-provisioner.so")).unwrap();
    }
    let mut cmd = assert_cmd::Command::cargo_bin("bmhctl").unwrap();
    cmd.current_dir(lab.path(""))
        .env("BMHCTL_TIME_SCALE", "0")
        .env("BMHCTL_SEED", "1")
        .env("BMHCTL_CONFIG", lab.path("config.yaml"))
        .env("PROVISIONER_PLUGIN_DIR", &plugins)
        .env("IRONIC_CACERT_FILE", "/nonexistent/ca.crt")
        .env("IRONIC_CLIENT_CERT_FILE", "/nonexistent/tls.crt")
        .env("IRONIC_CLIENT_PRIVATE_KEY_FILE", "/nonexistent/tls.key");
    for k in [
        "BMHCTL_PROVISIONER",
        "BMHCTL_STORE",
        "BMHCTL_CONTEXT",
        "BMHCTL_IRONIC_WAIT",
        "IRONIC_ENDPOINT",
        "METAL3_AUTH_ROOT_DIR",
        "DEPLOY_ISO_URL",
        "DEPLOY_KERNEL_URL",
        "DEPLOY_RAMDISK_URL",
        "IRONIC_NAME",
    ] {
        cmd.env_remove(k);
    }
    let out = cmd.envs(envs.iter().copied()).args(args).output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn hosts() -> String {
    format!("{}---\n{}", secret("bmc-secret"), host("h0", ""))
}

#[test]
fn get_contexts_marks_the_current_one_and_use_context_persists_it() {
    let lab = Lab::new().file("config.yaml", CONFIG);
    let before = run(&lab, &["config", "get-contexts"], &[]).expect_code(0);
    assert!(!before.stdout.contains('*'), "no current context yet");
    let used = run(&lab, &["config", "use-context", "lab"], &[]).expect_code(0);
    assert_eq!(used.stderr, "Switched to context \"lab\".\n");
    let table = run(&lab, &["config", "get-contexts"], &[]).expect_code(0);
    insta::assert_snapshot!(
        table
            .stdout
            .replace(lab.path("").to_str().unwrap(), "<lab>/")
    );
    let text = lab.read("config.yaml");
    assert!(
        text.starts_with("# the test's contexts\ncurrent-context: lab\n"),
        "{text}"
    );
    let current = run(&lab, &["config", "current-context"], &[]).expect_code(0);
    assert_eq!(current.stdout, "lab\n");
    // The context the other commands would use: the environment's over the file's.
    let env = [("BMHCTL_CONTEXT", "local")];
    let current = run(&lab, &["config", "current-context"], &env).expect_code(0);
    assert_eq!(current.stdout, "local\n");
    let table = run(&lab, &["config", "get-contexts"], &env).expect_code(0);
    assert!(
        table.stdout.contains("\n*        local"),
        "{}",
        table.stdout
    );
    let names = run(&lab, &["config", "get-contexts", "-o", "name"], &[]).expect_code(0);
    assert_eq!(names.stdout, "lab\nlocal\n");
    // An unknown name is refused, the file left as it was.
    let wrong = run(&lab, &["config", "use-context", "labb"], &[]).expect_code(2);
    assert!(
        wrong.stderr.contains("did you mean lab?"),
        "{}",
        wrong.stderr
    );
    assert_eq!(lab.read("config.yaml"), text);
}

#[test]
fn the_context_picks_the_endpoint_and_the_environment_overrides_it() {
    let endpoint = format!("http://127.0.0.1:{}", closed_port());
    let config = format!(
        "current-context: local\ncontexts:\n- name: local\n  provisioner: fixture\n- name: down\n  ironicEndpoint: {endpoint}\n  provisioner: ironic\n"
    );
    let text = hosts();
    let lab = Lab::new()
        .file("config.yaml", &config)
        .file("hosts.yaml", &text);
    let args = [
        "provision",
        "--context",
        "down",
        "--ironic-wait",
        "1s",
        "hosts.yaml",
    ];
    let r = run(&lab, &args, &[]).expect_code(1);
    assert!(
        r.stderr
            .starts_with(&format!("bmhctl: cannot reach Ironic at {endpoint}/v1/: ")),
        "{}",
        r.stderr
    );
    assert_eq!(lab.read("hosts.yaml"), text, "nothing written");
    // BMHCTL_CONTEXT picks it too.
    let r = run(
        &lab,
        &["provision", "--ironic-wait", "1s", "hosts.yaml"],
        &[("BMHCTL_CONTEXT", "down")],
    )
    .expect_code(1);
    assert!(r.stderr.contains(&endpoint), "{}", r.stderr);
    // The user's IRONIC_ENDPOINT wins over the context's.
    let other = format!("http://127.0.0.1:{}", closed_port());
    let r = run(&lab, &args, &[("IRONIC_ENDPOINT", &other)]).expect_code(1);
    assert!(
        r.stderr
            .starts_with(&format!("bmhctl: cannot reach Ironic at {other}/v1/: ")),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains(&endpoint), "{}", r.stderr);
    // So does a flag over the context's provisioner, and the current context (fixture)
    // applies without --context.
    run(&lab, &["provision", "hosts.yaml"], &[]).expect_code(0);
    assert!(lab.read("hosts.yaml").contains("state: available"));
}

#[test]
fn the_context_store_and_provisioner_are_used() {
    let lab = Lab::new()
        .file("config.yaml", CONFIG)
        .file("hosts.yaml", &hosts());
    run(
        &lab,
        &["--context", "local", "apply", "-f", "hosts.yaml"],
        &[],
    )
    .expect_code(0);
    assert!(
        lab.path("local-store").is_dir(),
        "the store beside the config file"
    );
    let got = run(&lab, &["--context", "local", "get", "-o", "name"], &[]).expect_code(0);
    assert_eq!(got.stdout, "baremetalhost.metal3.io/h0\n");
    // --store wins over the context's (and where it points there is no store).
    let other = lab.path("other");
    let got = run(
        &lab,
        &[
            "--context",
            "local",
            "get",
            "--store",
            other.to_str().unwrap(),
        ],
        &[],
    )
    .expect_code(2);
    assert_eq!(
        got.stderr,
        format!(
            "error: no store at {dir} (`bmhctl apply -f FILE --store {dir}` makes one)\n",
            dir = other.display()
        )
    );
}

#[test]
fn a_credentials_file_others_can_read_is_refused_and_nothing_is_written() {
    let config = "current-context: secure\ncontexts:\n- name: secure\n  ironicEndpoint: http://127.0.0.1:6385\n  credentialsFile: ironic-credentials.yaml\n";
    let text = hosts();
    let lab = Lab::new()
        .file("config.yaml", config)
        .file("hosts.yaml", &text)
        .file(
            "ironic-credentials.yaml",
            "username: admin\npassword: very-s3cret\n",
        );
    let creds = lab.path("ironic-credentials.yaml");
    std::fs::set_permissions(&creds, std::fs::Permissions::from_mode(0o644)).unwrap();
    let r = run(&lab, &["provision", "hosts.yaml"], &[]).expect_code(2);
    assert_eq!(
        r.stderr,
        format!(
            "error: credentials file {0} is readable by others (mode 0644): refused; run `chmod 600 {0}`\n",
            creds.display()
        )
    );
    assert!(!r.stdout.contains("very-s3cret") && !r.stderr.contains("very-s3cret"));
    assert_eq!(lab.read("hosts.yaml"), text);
    assert!(!lab.path(".bmhctl").exists(), "no bookkeeping written");
}

/// An Ironic that answers version discovery and 401 to anything else, and keeps the
/// `Authorization` headers it was sent.
fn recording_ironic() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = seen.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                    break;
                }
                if let Some((k, v)) = h.split_once(':')
                    && k.eq_ignore_ascii_case("authorization")
                {
                    keep.lock().unwrap().push(v.trim().to_string());
                }
            }
            let target = line.split_whitespace().nth(1).unwrap_or("");
            let (status, body) = if target == "/v1/" || target == "/v1" {
                (
                    "200 OK",
                    r#"{"version":{"version":"1.95","min_version":"1.1"}}"#,
                )
            } else {
                (
                    "401 Unauthorized",
                    r#"{"error_message":"{\"faultstring\":\"Incorrect username or password\"}"}"#,
                )
            };
            let _ = write!(
                conn,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (endpoint, seen)
}

#[test]
fn the_context_credentials_reach_ironic_and_no_output() {
    let (endpoint, seen) = recording_ironic();
    let config = format!(
        "current-context: secure\ncontexts:\n- name: secure\n  ironicEndpoint: {endpoint}\n  credentialsFile: creds.yaml\n  provisioner: ironic\n"
    );
    let lab = Lab::new()
        .file("config.yaml", &config)
        .file("hosts.yaml", &hosts())
        .file(
            "creds.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ironic\nstringData:\n  username: admin\n  password: very s3cret@/\n",
        );
    std::fs::set_permissions(
        lab.path("creds.yaml"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let r = run(
        &lab,
        &["-vv", "provision", "--ironic-wait", "1s", "hosts.yaml"],
        &[],
    )
    .expect_code(1);
    assert!(
        r.stderr
            .contains(&format!("Ironic at {endpoint}/v1/ refused the credentials")),
        "{}",
        r.stderr
    );
    // HTTP basic of admin:very s3cret@/ (the userinfo percent-decoded again).
    let want = "Basic YWRtaW46dmVyeSBzM2NyZXRALw==";
    assert!(
        seen.lock().unwrap().iter().any(|h| h == want),
        "{:?}",
        seen.lock().unwrap()
    );
    for leak in ["s3cret", "s3cret%40", "admin:"] {
        assert!(!r.stderr.contains(leak), "{leak}: {}", r.stderr);
        assert!(!r.stdout.contains(leak), "{leak}: {}", r.stdout);
    }
}

#[test]
fn a_broken_config_file_is_refused_with_its_line() {
    let lab = Lab::new()
        .file(
            "config.yaml",
            "contexts:\n- name: lab\n  ironicEndpiont: http://127.0.0.1:6385\n",
        )
        .file("hosts.yaml", &hosts());
    let r = run(&lab, &["get", "-f", "hosts.yaml"], &[]).expect_code(2);
    let config = lab.path("config.yaml");
    assert!(
        r.stderr.starts_with(&format!(
            "error: {}:3:3: unknown field `ironicEndpiont`",
            config.display()
        )),
        "{}",
        r.stderr
    );
    // No config file at all: no context, and naming one says where it looked.
    std::fs::remove_file(&config).unwrap();
    run(&lab, &["get", "-f", "hosts.yaml"], &[]).expect_code(0);
    let r = run(&lab, &["--context", "lab", "get", "-f", "hosts.yaml"], &[]).expect_code(2);
    assert_eq!(
        r.stderr,
        format!(
            "error: no context \"lab\" in {} (the file does not exist)\n",
            config.display()
        )
    );
}

#[test]
fn set_view_rename_and_delete_context_write_the_file_privately() {
    let lab = Lab::new();
    let config = lab.path("conf/config.yaml");
    let env = [("BMHCTL_CONFIG", config.to_str().unwrap())];
    let set = run(
        &lab,
        &[
            "config",
            "set-context",
            "lab",
            "--endpoint",
            "http://127.0.0.1:6385",
            "--credentials-file",
            "/etc/bmhctl/lab-ironic.yaml",
            "--ca-file",
            "/etc/pki/ca.crt",
            "--client-cert-file",
            "/etc/pki/client.crt",
            "--client-key-file",
            "/etc/pki/client.key",
            "--insecure",
            "--deploy-kernel-url",
            "http://images/ipa.kernel",
            "--deploy-ramdisk-url",
            "http://images/ipa.initramfs",
            "--deploy-iso-url",
            "http://builder:s3cret@images/ipa.iso",
            "--provisioner",
            "ironic",
            "--store",
            "lab-store",
            "--current",
        ],
        &env,
    )
    .expect_code(0);
    assert_eq!(
        set.stderr,
        "Context \"lab\" created.\nSwitched to context \"lab\".\n"
    );
    let mode = std::fs::metadata(&config).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "a new config file is private");
    let store = lab.path("lab-store");
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        format!(
            "current-context: lab\ncontexts:\n- name: lab\n  ironicEndpoint: http://127.0.0.1:6385\n  credentialsFile: /etc/bmhctl/lab-ironic.yaml\n  caFile: /etc/pki/ca.crt\n  clientCertFile: /etc/pki/client.crt\n  clientKeyFile: /etc/pki/client.key\n  insecure: true\n  deployKernelURL: http://images/ipa.kernel\n  deployRamdiskURL: http://images/ipa.initramfs\n  deployISOURL: http://builder:s3cret@images/ipa.iso\n  provisioner: ironic\n  store: {}\n",
            store.display()
        )
    );
    // A second context; an empty value removes a field.
    run(
        &lab,
        &[
            "config",
            "set-context",
            "prod",
            "--endpoint",
            "https://ironic.example.com:6385",
        ],
        &env,
    )
    .expect_code(0);
    let set = run(
        &lab,
        &[
            "config",
            "set-context",
            "lab",
            "--insecure=false",
            "--ca-file",
            "",
            "--deploy-kernel-url",
            "",
        ],
        &env,
    )
    .expect_code(0);
    assert_eq!(set.stderr, "Context \"lab\" modified.\n");
    // A mode the user chose is kept.
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o640)).unwrap();
    let view = run(&lab, &["config", "view"], &env).expect_code(0);
    assert_eq!(
        view.stdout,
        format!(
            "current-context: lab\ncontexts:\n- name: lab\n  ironicEndpoint: http://127.0.0.1:6385\n  credentialsFile: /etc/bmhctl/lab-ironic.yaml\n  clientCertFile: /etc/pki/client.crt\n  clientKeyFile: /etc/pki/client.key\n  insecure: false\n  deployRamdiskURL: http://images/ipa.initramfs\n  deployISOURL: http://builder:REDACTED@images/ipa.iso\n  provisioner: ironic\n  store: {}\n- name: prod\n  ironicEndpoint: https://ironic.example.com:6385\n",
            store.display()
        )
    );
    let renamed = run(&lab, &["config", "rename-context", "lab", "lab2"], &env).expect_code(0);
    assert_eq!(renamed.stderr, "Context \"lab\" renamed to \"lab2\".\n");
    let current = run(&lab, &["config", "current-context"], &env).expect_code(0);
    assert_eq!(current.stdout, "lab2\n", "the current context follows");
    let taken = run(&lab, &["config", "rename-context", "lab2", "prod"], &env).expect_code(2);
    assert_eq!(
        taken.stderr,
        format!(
            "error: cannot rename context \"lab2\" to \"prod\": \"prod\" already exists in {}\n",
            config.display()
        )
    );
    // Mistyped names get a did-you-mean in every config command, the file left as it was.
    let before = std::fs::read_to_string(&config).unwrap();
    for args in [
        &["config", "delete-context", "prd"][..],
        &["config", "rename-context", "prd", "x"],
        &["config", "use-context", "prd"],
    ] {
        let wrong = run(&lab, args, &env).expect_code(2);
        assert_eq!(
            wrong.stderr,
            format!(
                "error: no context \"prd\" in {}; contexts: lab2, prod; did you mean prod?\n",
                config.display()
            ),
            "{args:?}"
        );
    }
    let made = run(&lab, &["config", "set-context", "prd"], &env).expect_code(0);
    assert_eq!(
        made.stderr,
        "Context \"prd\" created.\nnote: a context of a close name exists: did you mean prod?\n"
    );
    run(&lab, &["config", "delete-context", "prd"], &env).expect_code(0);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
    let deleted = run(&lab, &["config", "delete-context", "lab2"], &env).expect_code(0);
    assert_eq!(
        deleted.stderr,
        format!(
            "deleted context lab2 from {}\nwarning: this removed the current context: pick \
             another with `bmhctl config use-context NAME`\n",
            config.display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "contexts:\n- name: prod\n  ironicEndpoint: https://ironic.example.com:6385\n"
    );
    let mode = std::fs::metadata(&config).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    // What reading would refuse is not written.
    let bad = run(
        &lab,
        &[
            "config",
            "set-context",
            "prod",
            "--endpoint",
            "ftp://ironic",
        ],
        &env,
    )
    .expect_code(2);
    assert_eq!(
        bad.stderr,
        format!(
            "error: {}: Context prod: contexts[0].ironicEndpoint: ironicEndpoint \"ftp://ironic\" \
             must start with http:// or https://\n",
            config.display()
        )
    );
}

#[test]
fn the_old_current_context_spelling_is_read_with_a_note_and_use_context_renames_it() {
    let lab = Lab::new().file(
        "config.yaml",
        "# mine\ncurrentContext: local\ncontexts:\n- name: local\n  provisioner: fixture\n- name: other\n",
    );
    let note = format!(
        "note: {}: `currentContext` is read as `current-context` (kubeconfig's spelling): rename \
         it (bmhctl config use-context does)\n",
        lab.path("config.yaml").display()
    );
    let current = run(&lab, &["config", "current-context"], &[]).expect_code(0);
    assert_eq!(
        (current.stdout.as_str(), current.stderr.as_str()),
        ("local\n", note.as_str())
    );
    // Every command says it, once.
    let lab = lab.file("hosts.yaml", &hosts());
    let got = run(&lab, &["get", "-f", "hosts.yaml", "-o", "name"], &[]).expect_code(0);
    assert_eq!(got.stderr, note);
    let used = run(&lab, &["config", "use-context", "other"], &[]).expect_code(0);
    assert_eq!(
        used.stderr,
        format!("{note}Switched to context \"other\".\n")
    );
    assert_eq!(
        lab.read("config.yaml"),
        "# mine\ncurrent-context: other\ncontexts:\n- name: local\n  provisioner: fixture\n- name: other\n"
    );
    let current = run(&lab, &["config", "current-context"], &[]).expect_code(0);
    assert_eq!(current.stderr, "", "no note once renamed");
}
