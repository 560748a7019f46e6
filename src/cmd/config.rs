//! `bmhctl config`: the contexts of the config file, as `kubectl config` has them.

use super::output;
use crate::context::Config;
use crate::error::Result;
use clap::{Subcommand, ValueEnum};

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
    }
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
