//! The canonical text of a charge: what its idempotency key is bound to, byte for byte the same in
//! the Rust shell as in the JS one (`chargeFingerprint` in pkg-template/lib/idempotency-key.js).
//!
//! Why a canonical form: a fingerprint must change when the request changes and only then. Field
//! order, whitespace and how a number is spelled must not change it; a field that is sent must.
//! So the text is the request's JSON data with the keys of every object sorted (by UTF-16 code
//! units, as JavaScript's `Array.prototype.sort` orders strings), numbers written as JavaScript
//! writes them (`String(n)`), strings quoted as `JSON.stringify` quotes them, without
//! `idempotencyKey` and without the fields the caller declares volatile. One shared fixture
//! (tests/fixtures/fingerprints.json) is checked from both shells.

use std::cmp::Ordering;

use super::sort::heap_sort_by;

/// A JSON value: the data of a charge's fields. Objects keep their fields in the order given;
/// the canonical text sorts them.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A finite number (a non-finite one is refused where it would be written).
    Number(f64),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object: `(name, value)` pairs.
    Object(Vec<(String, Json)>),
}

impl From<&str> for Json {
    fn from(s: &str) -> Self {
        Json::String(s.into())
    }
}

impl From<String> for Json {
    fn from(s: String) -> Self {
        Json::String(s)
    }
}

impl From<f64> for Json {
    fn from(n: f64) -> Self {
        Json::Number(n)
    }
}

impl From<u32> for Json {
    fn from(n: u32) -> Self {
        Json::Number(f64::from(n))
    }
}

impl From<bool> for Json {
    fn from(b: bool) -> Self {
        Json::Bool(b)
    }
}

/// Why a value has no canonical text or a JSON text did not parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonError {
    /// A number that is NaN or infinite (JSON would send `null`: not the field's value).
    NonFinite,
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// Not JSON text (at this byte offset).
    Syntax(usize),
}

/// The deepest nesting accepted (as the JS shell).
pub const MAX_DEPTH: usize = 32;

impl Json {
    /// Parse JSON text (RFC 8259; duplicate names keep the last, as `JSON.parse` does).
    ///
    /// ```
    /// use steadfast::core::canonical::Json;
    /// let v = Json::parse(r#"{ "b": [1, 2.5e3, "x"], "a": null }"#).unwrap();
    /// assert_eq!(v.canonical().unwrap(), r#"{"a":null,"b":[1,2500,"x"]}"#);
    /// ```
    pub fn parse(text: &str) -> Result<Json, JsonError> {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        let v = p.value(0)?;
        p.ws();
        if p.i == p.s.len() {
            Ok(v)
        } else {
            Err(JsonError::Syntax(p.i))
        }
    }

    /// This value's canonical text (objects with sorted keys, no whitespace).
    pub fn canonical(&self) -> Result<String, JsonError> {
        self.canonical_with(write_finite)
    }

    /// [`Json::canonical`] with finite numbers written by `number`, which must write what
    /// JavaScript's `String(n)` writes (the crate's own writer does). A shell with JavaScript at
    /// hand passes JS's own: then a wasm module carries no float formatting of core's.
    pub fn canonical_with(&self, number: NumberWriter) -> Result<String, JsonError> {
        let mut out = String::new();
        self.write(&mut out, 0, number)?;
        Ok(out)
    }

    fn write(&self, out: &mut String, depth: usize, number: NumberWriter) -> Result<(), JsonError> {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Number(n) if !n.is_finite() => return Err(JsonError::NonFinite),
            Json::Number(n) => number(out, *n),
            Json::String(s) => quote(out, s),
            Json::Array(items) => {
                if depth > MAX_DEPTH {
                    return Err(JsonError::TooDeep);
                }
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write(out, depth + 1, number)?;
                }
                out.push(']');
            }
            Json::Object(fields) => {
                if depth > MAX_DEPTH {
                    return Err(JsonError::TooDeep);
                }
                let refs: Vec<(&str, &Json)> =
                    fields.iter().map(|(k, v)| (k.as_str(), v)).collect();
                write_object(out, refs, depth, |_| false, number)?;
            }
        }
        Ok(())
    }
}

/// The canonical text of an object made of `fields`, leaving out the names `skip` says: keys
/// sorted by UTF-16 code units, the last of duplicate names kept (as `JSON.parse` would).
pub fn canonical_object<'a>(
    fields: impl IntoIterator<Item = (&'a str, &'a Json)>,
    skip: impl Fn(&str) -> bool,
) -> Result<String, JsonError> {
    canonical_object_with(fields, skip, write_finite)
}

/// [`canonical_object`] with numbers written by `number` (see [`Json::canonical_with`]).
pub fn canonical_object_with<'a>(
    fields: impl IntoIterator<Item = (&'a str, &'a Json)>,
    skip: impl Fn(&str) -> bool,
    number: NumberWriter,
) -> Result<String, JsonError> {
    let mut out = String::new();
    write_object(&mut out, fields.into_iter().collect(), 0, skip, number)?;
    Ok(out)
}

/// Appends a finite number as JavaScript's `String(n)` writes it.
pub type NumberWriter = fn(&mut String, f64);

pub(crate) fn utf16_order(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

fn write_object(
    out: &mut String,
    fields: Vec<(&str, &Json)>,
    depth: usize,
    skip: impl Fn(&str) -> bool,
    number: NumberWriter,
) -> Result<(), JsonError> {
    // Ties broken by position, so of duplicate names the last given stays last, and is the one kept
    // below. The module's heapsort, not `sort_by`: the std sort put two ~2.6 KB quicksorts into a
    // Rust app's module (one per `skip` type), for objects of a few fields.
    let mut fields: Vec<(usize, &str, &Json)> = fields
        .into_iter()
        .enumerate()
        .map(|(i, (k, v))| (i, k, v))
        .collect();
    heap_sort_by(&mut fields, |a, b| {
        utf16_order(a.1, b.1).then(a.0.cmp(&b.0)) == Ordering::Less
    });
    out.push('{');
    let mut first = true;
    for (i, (_, k, v)) in fields.iter().enumerate() {
        let dup = fields.get(i + 1).is_some_and(|(_, next, _)| next == k);
        if dup || skip(k) {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        quote(out, k);
        out.push(':');
        v.write(out, depth + 1, number)?;
    }
    out.push('}');
    Ok(())
}

/// `JSON.stringify(s)`: `"` and `\` escaped, control characters as `\b \f \n \r \t` or `\u00xx`.
pub(crate) fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let n = c as u32;
                out.push_str("\\u00");
                out.push(char::from_digit(n >> 4, 16).unwrap_or('0'));
                out.push(char::from_digit(n & 15, 16).unwrap_or('0'));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A finite number as JavaScript's `String(n)` writes it (ECMA-262 Number::toString): the
/// shortest digits that round-trip, plain between 1e-7 and 1e21, exponent form outside. The
/// default [`NumberWriter`]. The canonical writers refuse a non-finite number before asking it;
/// given one anyway, it appends `null` (what `JSON.stringify` writes), never panics.
pub fn write_finite(out: &mut String, n: f64) {
    if write_number(out, n).is_err() {
        out.push_str("null");
    }
}

fn write_number(out: &mut String, n: f64) -> Result<(), JsonError> {
    if !n.is_finite() {
        return Err(JsonError::NonFinite);
    }
    if n == 0.0 {
        out.push('0'); // -0 too
        return Ok(());
    }
    if n < 0.0 {
        out.push('-');
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "d.ddde±x".
    let sci = format!("{:e}", n.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i32;
    // n = 0.d1d2…dk × 10^point
    let point = exp.parse::<i32>().unwrap_or(0) + 1;
    if k <= point && point <= 21 {
        out.push_str(&digits);
        (0..point - k).for_each(|_| out.push('0'));
    } else if 0 < point && point <= 21 {
        let (int, frac) = digits.split_at(point as usize);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    } else if -6 < point && point <= 0 {
        out.push_str("0.");
        (0..-point).for_each(|_| out.push('0'));
        out.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let e = point - 1;
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        out.push_str(&e.unsigned_abs().to_string());
    }
    Ok(())
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while matches!(self.s.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn err<T>(&self) -> Result<T, JsonError> {
        Err(JsonError::Syntax(self.i))
    }

    fn eat(&mut self, lit: &str) -> Result<(), JsonError> {
        if self.s.get(self.i..self.i + lit.len()) == Some(lit.as_bytes()) {
            self.i += lit.len();
            Ok(())
        } else {
            self.err()
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, JsonError> {
        if depth > MAX_DEPTH {
            return Err(JsonError::TooDeep);
        }
        self.ws();
        match self.s.get(self.i) {
            Some(b'n') => self.eat("null").map(|()| Json::Null),
            Some(b't') => self.eat("true").map(|()| Json::Bool(true)),
            Some(b'f') => self.eat("false").map(|()| Json::Bool(false)),
            Some(b'"') => self.string().map(Json::String),
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Json::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Json::Array(items));
                        }
                        _ => return self.err(),
                    }
                }
            }
            Some(b'{') => {
                self.i += 1;
                let mut fields = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Json::Object(fields));
                }
                loop {
                    self.ws();
                    if self.s.get(self.i) != Some(&b'"') {
                        return self.err();
                    }
                    let k = self.string()?;
                    self.ws();
                    self.eat(":")?;
                    let v = self.value(depth + 1)?;
                    fields.push((k, v));
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Json::Object(fields));
                        }
                        _ => return self.err(),
                    }
                }
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => self.err(),
        }
    }

    fn number(&mut self) -> Result<Json, JsonError> {
        let start = self.i;
        while matches!(
            self.s.get(self.i),
            Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
        ) {
            self.i += 1;
        }
        let text = std::str::from_utf8(self.s.get(start..self.i).unwrap_or_default())
            .map_err(|_| JsonError::Syntax(start))?;
        // Rust's grammar for f64 is looser than JSON's (it takes "1." and "+1"): check JSON's.
        let b = text.as_bytes();
        let mut j = usize::from(b.first() == Some(&b'-'));
        let int_start = j;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        let int_len = j - int_start;
        let leading_zero = int_len > 1 && b.get(int_start) == Some(&b'0');
        let mut ok = int_len > 0 && !leading_zero;
        if b.get(j) == Some(&b'.') {
            j += 1;
            let f = j;
            while b.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            ok &= j > f;
        }
        if matches!(b.get(j), Some(b'e' | b'E')) {
            j += 1;
            if matches!(b.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            let e = j;
            while b.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            ok &= j > e;
        }
        match text.parse::<f64>() {
            Ok(n) if ok && j == b.len() && n.is_finite() => Ok(Json::Number(n)),
            Ok(n) if ok && j == b.len() && !n.is_finite() => Err(JsonError::NonFinite),
            _ => Err(JsonError::Syntax(start)),
        }
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let h = self
            .s
            .get(self.i..self.i + 4)
            .ok_or(JsonError::Syntax(self.i))?;
        let h = std::str::from_utf8(h).map_err(|_| JsonError::Syntax(self.i))?;
        let n = u32::from_str_radix(h, 16).map_err(|_| JsonError::Syntax(self.i))?;
        self.i += 4;
        Ok(n)
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.i += 1; // the opening quote
        let mut out = String::new();
        loop {
            let start = self.i;
            while let Some(&c) = self.s.get(self.i) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            let run = self.s.get(start..self.i).unwrap_or_default();
            out.push_str(std::str::from_utf8(run).map_err(|_| JsonError::Syntax(start))?);
            match self.s.get(self.i) {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = *self.s.get(self.i).ok_or(JsonError::Syntax(self.i))?;
                    self.i += 1;
                    match c {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) {
                                // A surrogate pair; a lone surrogate has no place in a Rust string.
                                self.eat("\\u")?;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return self.err();
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            };
                            out.push(char::from_u32(code).ok_or(JsonError::Syntax(self.i))?);
                        }
                        _ => return self.err(),
                    }
                }
                _ => return self.err(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(n: f64) -> String {
        let mut s = String::new();
        write_number(&mut s, n).unwrap();
        s
    }

    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        for (n, js) in [
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (4999.0, "4999"),
            (-12.5, "-12.5"),
            (0.1, "0.1"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (123456789012345680000.0, "123456789012345680000"),
            (1e21, "1e+21"),
            (1.25e300, "1.25e+300"),
            (9007199254740991.0, "9007199254740991"),
            (5e-324, "5e-324"),
        ] {
            assert_eq!(num(n), js, "{n:e}");
        }
        assert_eq!(
            Json::Number(f64::NAN).canonical(),
            Err(JsonError::NonFinite)
        );
    }

    #[test]
    fn keys_sort_by_utf16_code_units_and_strings_quote_as_json_stringify() {
        // U+FF5E sorts after U+1F600 in UTF-8 order but before it in UTF-16 (a surrogate, 0xD83D).
        let v = Json::Object(vec![
            ("\u{1F600}".into(), Json::Null),
            ("\u{FF5E}".into(), Json::Null),
            ("b".into(), Json::from("q\"\\\n\u{1}é")),
            ("a".into(), Json::Bool(true)),
        ]);
        assert_eq!(
            v.canonical().unwrap(),
            "{\"a\":true,\"b\":\"q\\\"\\\\\\n\\u0001é\",\"\u{1F600}\":null,\"\u{FF5E}\":null}"
        );
    }

    #[test]
    fn of_duplicate_names_the_last_given_is_kept_whatever_the_order() {
        // 12 fields, 4 names given 3 times each in rotating orders: the sort is not stable by
        // itself, only the position tie-break keeps the last value of each name.
        for rotate in 0..12 {
            let mut fields: Vec<(String, Json)> = (0..12)
                .map(|i| {
                    (
                        ["d", "b", "c", "a"][i % 4].to_string(),
                        Json::from(i as f64),
                    )
                })
                .collect();
            fields.rotate_left(rotate);
            let mut want: Vec<(String, f64)> = Vec::new();
            for (k, v) in &fields {
                let Json::Number(n) = v else { unreachable!() };
                want.retain(|(w, _)| w != k);
                want.push((k.clone(), *n));
            }
            want.sort_by(|a, b| a.0.cmp(&b.0));
            let text: Vec<String> = want.iter().map(|(k, n)| format!("\"{k}\":{n}")).collect();
            assert_eq!(
                Json::Object(fields).canonical().unwrap(),
                format!("{{{}}}", text.join(",")),
                "rotation {rotate}"
            );
        }
    }

    #[test]
    fn parse_round_trips_and_refuses_what_json_does_not_allow() {
        let v = Json::parse(r#"{"a":[1,-0.5,1e3,"\u00e9\ud83d\ude00"],"b":{},"a":2}"#).unwrap();
        assert_eq!(v.canonical().unwrap(), "{\"a\":2,\"b\":{}}");
        for bad in [
            "01",
            "1.",
            "+1",
            "[1,]",
            "{\"a\" 1}",
            "\"\\x\"",
            "nul",
            "1e999",
            "[1] x",
        ] {
            assert!(Json::parse(bad).is_err(), "{bad}");
        }
        let deep = "[".repeat(40) + &"]".repeat(40);
        assert_eq!(Json::parse(&deep), Err(JsonError::TooDeep));
    }
}
