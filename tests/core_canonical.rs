//! The shared fingerprint fixture (tests/fixtures/fingerprints.json), from the Rust side: the
//! core's canonical text of each charge and its SHA-256/128 digest are the ones the JS package
//! writes (tests/js/fingerprint-fixture.test.mjs checks the same file in JS and Redis).

use steadfast::core::canonical::{canonical_object, Json};
use steadfast::core::idempotency::fingerprint;

fn field<'a>(v: &'a Json, name: &str) -> Option<&'a Json> {
    match v {
        Json::Object(fields) => fields.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v),
        _ => None,
    }
}

fn text(v: &Json) -> &str {
    match v {
        Json::String(s) => s,
        other => panic!("expected a string, got {other:?}"),
    }
}

fn cases() -> Vec<Json> {
    let doc = Json::parse(include_str!("fixtures/fingerprints.json")).expect("the fixture parses");
    match field(&doc, "cases") {
        Some(Json::Array(cases)) => cases.clone(),
        other => panic!("no cases: {other:?}"),
    }
}

fn hex(n: u128) -> String {
    format!("{n:032x}")
}

#[test]
fn the_core_writes_the_fixture_text_and_digest_for_every_case() {
    let cases = cases();
    assert!(cases.len() >= 8);
    for case in &cases {
        let name = text(field(case, "name").unwrap());
        let volatile: Vec<String> = match field(case, "volatileFields") {
            Some(Json::Array(names)) => names.iter().map(|n| text(n).to_string()).collect(),
            _ => Vec::new(),
        };
        let Some(Json::Object(charge)) = field(case, "charge") else {
            panic!("{name}: no charge");
        };
        let canonical = canonical_object(charge.iter().map(|(k, v)| (k.as_str(), v)), |k| {
            k == "idempotencyKey" || volatile.iter().any(|v| v == k)
        })
        .unwrap();
        assert_eq!(canonical, text(field(case, "canonical").unwrap()), "{name}");
        let digest = hex(fingerprint(&format!("f:{canonical}")));
        assert_eq!(digest, text(field(case, "digest").unwrap()), "{name}");
    }
}
