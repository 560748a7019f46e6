//! `bmhctl config`: the contexts of the config file, as `kubectl config` has them.

use super::output;
use crate::context::{Config, Context};
use crate::error::{Error, Result};
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// List the contexts of the config file; `*` marks the current one.
    GetContexts {
        /// `table`, or `name`: the names alone, one a line.
        #[arg(short, long, value_enum, default_value_t = ContextFormat::Table)]
        output: ContextFormat,
    },
    /// Print the name of the current context.
    CurrentContext,
    /// Make NAME the current context (written into the config file).
    UseContext {
        #[arg(value_name = "NAME")]
        name: String,
    },
    /// Print where the config file is (`$BMHCTL_CONFIG`, else the platform's config directory).
    Path,
    /// Create the context NAME, or change the fields given (an empty value removes one).
    SetContext(Box<SetContextArgs>),
    /// Print the config file as bmhctl reads it, passwords in URLs as REDACTED.
    View,
    /// Remove the context NAME from the config file.
    DeleteContext {
        #[arg(value_name = "NAME")]
        name: String,
    },
    /// Rename the context OLD to NEW (and the current context with it).
    RenameContext {
        #[arg(value_name = "OLD")]
        old: String,
        #[arg(value_name = "NEW")]
        new: String,
    },
}

/// Every field a context holds (docs/contexts.md); relative paths are made absolute.
#[derive(Debug, Args)]
pub struct SetContextArgs {
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Ironic's API (`IRONIC_ENDPOINT`); credentials go in --credentials-file.
    #[arg(long, visible_alias = "ironic-endpoint", value_name = "URL")]
    pub endpoint: Option<String>,
    /// HTTP basic credentials for the endpoint (YAML or a Secret), mode 0600.
    #[arg(long, value_name = "FILE")]
    pub credentials_file: Option<String>,
    /// CA bundle (`IRONIC_CACERT_FILE`).
    #[arg(long, value_name = "FILE")]
    pub ca_file: Option<String>,
    /// mTLS client certificate (`IRONIC_CLIENT_CERT_FILE`).
    #[arg(long, value_name = "FILE")]
    pub client_cert_file: Option<String>,
    /// mTLS client key (`IRONIC_CLIENT_PRIVATE_KEY_FILE`).
    #[arg(long, value_name = "FILE")]
    pub client_key_file: Option<String>,
    /// Skip TLS verification (`IRONIC_INSECURE`); `--insecure=false` turns it off.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub insecure: Option<bool>,
    /// `DEPLOY_KERNEL_URL`.
    #[arg(long, value_name = "URL")]
    pub deploy_kernel_url: Option<String>,
    /// `DEPLOY_RAMDISK_URL`.
    #[arg(long, value_name = "URL")]
    pub deploy_ramdisk_url: Option<String>,
    /// `DEPLOY_ISO_URL`.
    #[arg(long, value_name = "URL")]
    pub deploy_iso_url: Option<String>,
    /// The provisioner (`--provisioner` of the commands run in the context).
    #[arg(long, value_name = "NAME")]
    pub provisioner: Option<String>,
    /// The store (`--store` of the commands run in the context).
    #[arg(long, value_name = "DIR")]
    pub store: Option<String>,
    /// Make it the current context too.
    #[arg(long)]
    pub current: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ContextFormat {
    Table,
    Name,
}

pub fn run(cmd: ConfigCommand, context: Option<&str>) -> Result<()> {
    // The context the other commands would use: the flag, else the environment, else the file.
    let from_env = std::env::var(crate::context::CONTEXT_VAR).ok();
    let context = context.or(from_env.as_deref()).filter(|c| !c.is_empty());
    let config = Config::load(super::options::config_file().as_deref())?;
    config.note_old_spelling();
    match cmd {
        ConfigCommand::GetContexts { output } => {
            if config.file.contexts.is_empty() {
                crate::eprintln_quiet!("No contexts in {}.", config.path.display());
                return Ok(());
            }
            let current = config.select(context)?.map(|c| c.name.clone());
            match output {
                ContextFormat::Name => {
                    let text: String = config
                        .file
                        .contexts
                        .iter()
                        .map(|c| format!("{}\n", c.name))
                        .collect();
                    output::write_stdout(&text)
                }
                ContextFormat::Table => output::line(table(&config, current.as_deref())),
            }
        }
        ConfigCommand::CurrentContext => match config.select(context)? {
            Some(c) => output::line(&c.name),
            None => Err(crate::error::Error::Usage(format!(
                "no current context: {} sets none (bmhctl config use-context NAME)",
                config.path.display()
            ))),
        },
        ConfigCommand::UseContext { name } => {
            config.use_context(&name)?;
            crate::eprintln_quiet!("Switched to context \"{name}\".");
            Ok(())
        }
        ConfigCommand::Path => output::line(config.path.display()),
        ConfigCommand::SetContext(args) => set_context(&config, *args),
        ConfigCommand::View => output::write_stdout(&config.file.to_yaml(true)),
        ConfigCommand::DeleteContext { name } => {
            config.existing(&name)?;
            let mut file = config.file.clone();
            file.contexts.retain(|c| c.name != name);
            let was_current = file.current_context.as_deref() == Some(name.as_str());
            if was_current {
                file.current_context = None;
            }
            config.save(&file)?;
            crate::eprintln_quiet!("deleted context {name} from {}", config.path.display());
            if was_current {
                crate::eprintln_quiet!(
                    "warning: this removed the current context: pick another with `bmhctl config \
                     use-context NAME`"
                );
            }
            Ok(())
        }
        ConfigCommand::RenameContext { old, new } => {
            config.existing(&old)?;
            if config.context(&new).is_some() {
                return Err(Error::Usage(format!(
                    "cannot rename context {old:?} to {new:?}: {new:?} already exists in {}",
                    config.path.display()
                )));
            }
            check_name(&new)?;
            let mut file = config.file.clone();
            for c in file.contexts.iter_mut().filter(|c| c.name == old) {
                c.name = new.clone();
            }
            if file.current_context.as_deref() == Some(old.as_str()) {
                file.current_context = Some(new.clone());
            }
            config.save(&file)?;
            crate::eprintln_quiet!("Context \"{old}\" renamed to \"{new}\".");
            Ok(())
        }
    }
}

fn check_name(name: &str) -> Result<()> {
    if name.trim().is_empty() {
        return Err(Error::Usage("a context needs a name".into()));
    }
    Ok(())
}

/// A path given on the command line, made absolute (the file's paths are relative to the file).
fn absolute(p: PathBuf) -> Result<PathBuf> {
    if p.is_absolute() || p.starts_with("~") {
        return Ok(p);
    }
    std::path::absolute(&p).map_err(|e| Error::io(&p, e))
}

fn set_context(config: &Config, args: SetContextArgs) -> Result<()> {
    check_name(&args.name)?;
    let mut file = config.file.clone();
    let created = config.context(&args.name).is_none();
    if created {
        file.contexts.push(Context {
            name: args.name.clone(),
            ..Context::default()
        });
    }
    let ctx = file
        .contexts
        .iter_mut()
        .find(|c| c.name == args.name)
        .expect("the context is there");
    // An empty value removes the field.
    let text = |slot: &mut Option<String>, v: Option<String>| {
        if let Some(v) = v {
            *slot = Some(v).filter(|v| !v.is_empty());
        }
    };
    let path = |slot: &mut Option<PathBuf>, v: Option<String>| -> Result<()> {
        if let Some(v) = v {
            *slot = match v.is_empty() {
                true => None,
                false => Some(absolute(PathBuf::from(v))?),
            };
        }
        Ok(())
    };
    text(&mut ctx.ironic_endpoint, args.endpoint);
    path(&mut ctx.credentials_file, args.credentials_file)?;
    path(&mut ctx.ca_file, args.ca_file)?;
    path(&mut ctx.client_cert_file, args.client_cert_file)?;
    path(&mut ctx.client_key_file, args.client_key_file)?;
    if args.insecure.is_some() {
        ctx.insecure = args.insecure;
    }
    text(&mut ctx.deploy_kernel_url, args.deploy_kernel_url);
    text(&mut ctx.deploy_ramdisk_url, args.deploy_ramdisk_url);
    text(&mut ctx.deploy_iso_url, args.deploy_iso_url);
    text(&mut ctx.provisioner, args.provisioner);
    path(&mut ctx.store, args.store)?;
    if args.current {
        file.current_context = Some(args.name.clone());
    }
    // What would be refused when read is refused before it is written.
    config.checked(&file)?;
    config.save(&file)?;
    let done = if created { "created" } else { "modified" };
    crate::eprintln_quiet!("Context \"{}\" {done}.", args.name);
    if created {
        // A mistyped name makes a new context: say which one was perhaps meant.
        let close = config.did_you_mean(&args.name);
        if let Some(m) = close.strip_prefix("; did you mean ") {
            crate::eprintln_quiet!("note: a context of a close name exists: did you mean {m}");
        }
    }
    if args.current {
        crate::eprintln_quiet!("Switched to context \"{}\".", args.name);
    }
    Ok(())
}

fn table(config: &Config, current: Option<&str>) -> String {
    let rows = config.file.contexts.iter().map(|c| {
        let mark = if current == Some(c.name.as_str()) {
            "*"
        } else {
            ""
        };
        [
            mark.to_string(),
            c.name.clone(),
            c.ironic_endpoint.clone().unwrap_or_default(),
            c.provisioner.clone().unwrap_or_default(),
            c.store
                .as_ref()
                .map(|s| config.resolve(s).display().to_string())
                .unwrap_or_default(),
        ]
    });
    let header = ["CURRENT", "NAME", "ENDPOINT", "PROVISIONER", "STORE"];
    output::kubectl_table(Some(&header), rows)
}
