//! `--output` (and `export`'s and `report`'s `--format`): one [`OutputFormat`] behind every
//! command's format flag, each command offering its own values in its own words, and the
//! [`choices`] value parser that does that for any enum (fsync's families and offsets too).

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Arg, Args};

/// What a command prints (or `export` and `report` write): the one format enum. Each command
/// offers some of them (its list below); the others are refused by clap as unknown values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    #[default]
    Text,
    Json,
    Csv,
    Markdown,
    Html,
}

impl OutputFormat {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "text" => Self::Text,
            "json" => Self::Json,
            "csv" => Self::Csv,
            "markdown" | "md" => Self::Markdown,
            "html" => Self::Html,
            _ => return None,
        })
    }
}

/// A flag's values as one command offers them, each `(name, the words --help gives it)`, a
/// name with another after `|` taking both (`markdown|md`); `to` reads the name given. One enum
/// (the output format, the database family) thus stands behind several commands' flags, each
/// offering some of its values in its own words. A value not offered is clap's usual error.
pub fn choices<T: Clone + Send + Sync + 'static>(
    values: &'static [(&'static str, &'static str)],
    to: fn(&str) -> Option<T>,
) -> impl TypedValueParser<Value = T> {
    let offered = values
        .iter()
        .map(|&(names, help)| match names.split_once('|') {
            Some((name, alias)) => PossibleValue::new(name).alias(alias).help(help),
            None => PossibleValue::new(names).help(help),
        });
    PossibleValuesParser::new(offered).map(move |s| to(&s).expect("clap offered it"))
}

/// The measuring commands and `show`: tables, the JSON contract, CSV.
const MEASURED: &[(&str, &str)] = &[
    ("text", "Tables for people"),
    ("json", "The JSON result contract, alone on stdout"),
    ("csv", "One row per test and scope"),
];
/// Lists and checks (history, compare, baseline show, audit, monitor): a table or JSON.
const LISTED: &[(&str, &str)] = &[("text", "A table for people"), ("json", "JSON for scripts")];
/// `verify`: a summary or the JSON contract.
const VERIFY: &[(&str, &str)] = &[
    ("text", "A summary and the first failures, for people"),
    ("json", "The JSON result contract, alone on stdout"),
];
/// `export --format`: files for other tools and people.
const EXPORT: &[(&str, &str)] = &[
    (
        "json",
        "The result JSON (one run: the object `iocap run --output json` prints; several: an \
         array)",
    ),
    ("csv", "One row per test, scope and target, one header"),
    (
        "markdown|md",
        "Tables for a ticket or an e-mail to the storage vendor (also: md)",
    ),
];

/// The formats of the measuring commands and `show`.
pub fn measured() -> impl TypedValueParser<Value = OutputFormat> {
    choices(MEASURED, OutputFormat::parse)
}
/// `export --format`.
pub fn export_formats() -> impl TypedValueParser<Value = OutputFormat> {
    choices(EXPORT, OutputFormat::parse)
}
/// `report --format`: HTML only.
pub fn report_formats() -> impl TypedValueParser<Value = OutputFormat> {
    choices(
        &[("html", "One self-contained HTML file")],
        OutputFormat::parse,
    )
}
/// For `mut_arg("output", listed)`: a table or JSON.
pub fn listed(a: Arg) -> Arg {
    a.value_parser(choices(LISTED, OutputFormat::parse))
}
/// For `mut_arg("output", verify_output)`: a summary or JSON, as `--output` only.
pub fn verify_output(a: Arg) -> Arg {
    a.value_parser(choices(VERIFY, OutputFormat::parse))
        .visible_alias(None)
        .help("Output format; json goes to stdout alone")
}

/// `--output` (also `--format`): text, json or csv unless the command says otherwise.
#[derive(Args, Debug, Clone, Default)]
pub struct OutputArg {
    #[arg(long, visible_alias = "format", value_parser = measured(), default_value = "text")]
    pub output: OutputFormat,
}

impl OutputArg {
    pub fn is_text(&self) -> bool {
        self.output == OutputFormat::Text
    }
}
