//! Gateway dialects across the boundary: a validated dialect the JS shell asks per charge (header
//! value, what an answer means, replay, key age). Strings cross only per charge or per error
//! answer, never on a success's hot path beyond the key header.

use wasm_bindgen::prelude::*;

use super::throw;
use crate::core::dialect::{Dialect, KeySyntax, BUILTIN, NO_STATUS};
use crate::core::error::{Error, Expect, Opt};

/// The built-in dialect names, comma-separated, default first.
#[wasm_bindgen(js_name = dialectNames)]
pub fn dialect_names() -> String {
    let names: Vec<&str> = BUILTIN.iter().map(|r| r.name).collect();
    names.join(",")
}

/// [`DialectCore::fields`]'s slots.
pub(super) const FIELDS: [&str; 6] = [
    "syntax",
    "maxKeyLength",
    "retentionMs",
    "inProgressStatus",
    "reuseStatus0",
    "reuseStatus1",
];

/// A validated gateway dialect (`core::dialect::Dialect`).
#[wasm_bindgen]
pub struct DialectCore {
    dialect: Dialect,
}

fn status(option: Opt, v: f64) -> Result<u16, JsValue> {
    if v.is_finite()
        && v.fract() == 0.0
        && (v == f64::from(NO_STATUS) || (400.0..=599.0).contains(&v))
    {
        Ok(v as u16)
    } else {
        Err(throw(Error::option(option, Expect::ErrorStatus)))
    }
}

#[wasm_bindgen]
impl DialectCore {
    /// The built-in dialect `name`; a string error code `DIALECT_UNKNOWN` otherwise.
    #[wasm_bindgen(js_name = builtin)]
    pub fn builtin(name: &str) -> Option<DialectCore> {
        Dialect::builtin(name).map(|dialect| DialectCore { dialect })
    }

    /// A custom dialect, validated by `Dialect::custom`. `syntax`: a `KeySyntax` id (the wire's
    /// `keySyntax` group); a status of `NO_STATUS` (the wire's `dialect.noStatus`): none.
    #[wasm_bindgen(js_name = custom)]
    #[allow(clippy::too_many_arguments)]
    pub fn custom(
        name: String,
        header: String,
        syntax: u32,
        max_key_length: f64,
        retention_ms: f64,
        in_progress_status: f64,
        reuse_a: f64,
        reuse_b: f64,
        reuse_error_type: String,
        replay_header: String,
    ) -> Result<DialectCore, JsValue> {
        let max_key_len =
            if max_key_length.is_finite() && max_key_length.fract() == 0.0 && max_key_length >= 1.0
            {
                max_key_length.min(1000.0) as u32
            } else {
                0
            };
        let dialect = Dialect::custom(Dialect {
            name,
            header,
            syntax: KeySyntax::ALL
                .get(syntax as usize)
                .copied()
                .unwrap_or(KeySyntax::Raw),
            max_key_len,
            retention_ms,
            in_progress_status: status(Opt::InProgressStatus, in_progress_status)?,
            reuse_statuses: [
                status(Opt::ReuseStatuses, reuse_a)?,
                status(Opt::ReuseStatuses, reuse_b)?,
            ],
            reuse_error_type,
            replay_header,
        })
        .map_err(throw)?;
        Ok(DialectCore { dialect })
    }

    /// Its name.
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> String {
        self.dialect.name.clone()
    }
    /// The key's header name.
    #[wasm_bindgen(getter)]
    pub fn header(&self) -> String {
        self.dialect.header.clone()
    }
    /// The error type a reuse answer must carry (`""`: the status alone).
    #[wasm_bindgen(getter, js_name = reuseErrorType)]
    pub fn reuse_error_type(&self) -> String {
        self.dialect.reuse_error_type.clone()
    }
    /// The replay marker header (`""`: none).
    #[wasm_bindgen(getter, js_name = replayHeader)]
    pub fn replay_header(&self) -> String {
        self.dialect.replay_header.clone()
    }
    /// Its numbers at once, by the slots of [`FIELDS`] (the wire's `dialectFields` layout): the
    /// key syntax's id, the key limit, the retention window in ms (`Infinity`: not published),
    /// the in-progress status and the two reuse statuses (`NO_STATUS`: none). One crossing
    /// instead of a getter each (every exported getter costs its own glue and shim).
    pub fn fields(&self) -> Vec<f64> {
        let d = &self.dialect;
        vec![
            f64::from(d.syntax.id()),
            f64::from(d.max_key_len),
            d.retention_ms,
            f64::from(d.in_progress_status),
            f64::from(d.reuse_statuses[0]),
            f64::from(d.reuse_statuses[1]),
        ]
    }

    /// The header value for `key`; throws the code `INVALID_KEY` or `KEY_TOO_LONG`.
    #[wasm_bindgen(js_name = headerValue)]
    pub fn header_value(&self, key: &str) -> Result<String, JsValue> {
        self.dialect.header_value(key).map_err(throw)
    }

    /// The history answer code of a status (`-4`: in progress; else the status).
    pub fn answer(&self, status: u16) -> f64 {
        match self.dialect.answer(status) {
            crate::core::history::Answer::InProgress => -4.0,
            _ => f64::from(status),
        }
    }

    /// Whether `status` with body error type `error_type` means "key reused".
    #[wasm_bindgen(js_name = isReuse)]
    pub fn is_reuse(&self, status: u16, error_type: &str) -> bool {
        self.dialect.is_reuse(status, error_type)
    }

    /// Whether the replay header's value marks a replay.
    #[wasm_bindgen(js_name = isReplay)]
    pub fn is_replay(&self, value: Option<String>) -> bool {
        self.dialect.is_replay(value.as_deref())
    }

    /// Whether a key first used at `first_used_ms` is past retention at `now_ms`.
    #[wasm_bindgen(js_name = keyExpired)]
    pub fn key_expired(&self, first_used_ms: f64, now_ms: f64) -> bool {
        self.dialect.key_expired(first_used_ms, now_ms)
    }
}
