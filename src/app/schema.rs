//! `lab schema`: the JSON Schema of lab.toml, as the config stage declares it.

use crate::error::{Exit, Result};
use crate::layout::Layout;

#[derive(Debug, clap::Args)]
pub struct SchemaArgs {}

impl SchemaArgs {
    /// `lab schema`: prints the schema.
    pub fn execute(self, _layout: &Layout, _quiet: bool) -> Result<Exit> {
        println!("{}", lab_config::schema_json());
        Ok(Exit::Ok)
    }
}
