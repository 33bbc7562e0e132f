use crate::expect::*;
use crate::guidelines::*;
use crate::AssessError;

#[test]
fn link_descriptions_parse() {
    assert_eq!(parse_links("2 x 16Gb FC"), Ok(3200.0));
    assert_eq!(parse_links("2x16G FC"), Ok(3200.0));
    assert_eq!(parse_links("16GFC"), Ok(1600.0));
    assert_eq!(parse_links("4 x 8Gb FC"), Ok(3200.0));
    assert_eq!(parse_links("1 x 4Gb FC"), Ok(400.0));
    assert_eq!(parse_links("2Gb FC"), Ok(200.0));
    assert_eq!(parse_links("1 x 10GbE iSCSI"), Ok(1100.0));
    assert_eq!(parse_links("25GbE"), Ok(2800.0));
    assert_eq!(parse_links("2 x 16Gb FC + 2 x 10GbE"), Ok(5400.0));
    for bad in ["", "2 x 16Gb", "0 x 16Gb FC", "fast", "x FC"] {
        assert!(
            matches!(parse_links(bad), Err(AssessError::Links { .. })),
            "{bad:?}"
        );
    }
}

#[test]
fn expectations_file() {
    let e = Expectations::from_toml(
        "links = \"2 x 16Gb FC\"\nrandom_read_8k_iops = 200000\nsequential_mb_s = 4000\n",
    )
    .unwrap();
    assert_eq!(e.random_read_8k_iops, Some(200_000.0));
    assert_eq!(e.link_mb_s(), Some(3200.0));
    // the links cap the sequential figure
    let (v, from) = e.sequential().unwrap();
    assert_eq!(v, 3200.0);
    assert!(from.contains("2 x 16Gb FC"));
    let e = Expectations::from_toml("sequential_mb_s = 2000").unwrap();
    assert_eq!(e.sequential().unwrap().0, 2000.0);
    assert!(Expectations::from_toml("links = \"2 x 16 FC-ish\"").is_ok());
    assert!(Expectations::from_toml("links = \"lots\"").is_err());
    assert!(Expectations::from_toml("sequential_mb_s = -1").is_err());
    assert!(Expectations::from_toml("iops = 5").is_err());
}

#[test]
fn guidelines_default_and_override() {
    let g = Guidelines::default();
    assert_eq!(
        g.flash.log_write_p99,
        Limit {
            pass: 1.0,
            warn: 5.0
        }
    );
    assert_eq!(
        g.flash.data_read_p99,
        Limit {
            pass: 2.0,
            warn: 10.0
        }
    );
    assert_eq!(
        g.rotational.log_write_p99,
        Limit {
            pass: 5.0,
            warn: 20.0
        }
    );
    assert_eq!(
        g.rotational.data_read_p99,
        Limit {
            pass: 20.0,
            warn: 50.0
        }
    );
    let o = Guidelines::with_override(Some("[flash]\nlog_write_p99 = { pass = 0.2, warn = 1 }\n"))
        .unwrap();
    assert_eq!(
        o.flash.log_write_p99,
        Limit {
            pass: 0.2,
            warn: 1.0
        }
    );
    assert_eq!(o.flash.data_read_p99, g.flash.data_read_p99);
    assert_eq!(o.rotational, g.rotational);
    let partial =
        Guidelines::with_override(Some("[rotational.log_write_p50]\nwarn = 8.0\n")).unwrap();
    assert_eq!(
        partial.rotational.log_write_p50,
        Limit {
            pass: 2.0,
            warn: 8.0
        }
    );
    for bad in [
        "[flash]\nlog_write_p99 = { pass = 5.0, warn = 1.0 }",
        "[flash]\nlog_write_p99 = { pass = 0.0, warn = 1.0 }",
        "[flash]\nlog_p99 = { pass = 1.0, warn = 2.0 }",
        "[ssd]",
        "not toml [",
    ] {
        assert!(
            matches!(
                Guidelines::with_override(Some(bad)),
                Err(AssessError::Guidelines(_))
            ),
            "{bad:?}"
        );
    }
    assert_eq!(
        DeviceClass::from_rotational(Some(true)),
        DeviceClass::Rotational
    );
    assert_eq!(
        DeviceClass::from_rotational(Some(false)),
        DeviceClass::Flash
    );
    assert_eq!(DeviceClass::from_rotational(None), DeviceClass::Flash);
    assert_eq!(DeviceClass::parse("HDD"), Some(DeviceClass::Rotational));
    let mut c = RoleClasses::all(DeviceClass::Flash);
    assert_eq!(c.describe(), "flash");
    c.log = DeviceClass::Rotational;
    assert_eq!(
        c.describe(),
        "data flash, log rotational, temp flash, backup flash"
    );
}
