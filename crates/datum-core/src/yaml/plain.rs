//! How a plain (unquoted) scalar reads under the YAML 1.2 core schema:
//! null, boolean, integer, float or text.

/// How a plain scalar reads under the YAML 1.2 core schema.
#[derive(Debug, PartialEq)]
pub(crate) enum Plain {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer literal that does not fit 64 bits.
    BigInt,
    Float,
    Str,
}

pub(crate) fn classify_plain(s: &str) -> Plain {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Plain::Null,
        "true" | "True" | "TRUE" => return Plain::Bool(true),
        "false" | "False" | "FALSE" => return Plain::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => return Plain::Float,
        _ => {}
    }
    let int = |digits: &str, radix: u32, neg: bool| -> Plain {
        // The sign is parsed with the digits, so that -2^63 fits.
        let parsed = if neg {
            i64::from_str_radix(&format!("-{digits}"), radix)
        } else {
            i64::from_str_radix(digits, radix)
        };
        match parsed {
            Ok(v) => Plain::Int(v),
            Err(_) => Plain::BigInt,
        }
    };
    if let Some(rest) = s.strip_prefix("0o")
        && !rest.is_empty()
        && rest.bytes().all(|b| (b'0'..=b'7').contains(&b))
    {
        return int(rest, 8, false);
    }
    if let Some(rest) = s.strip_prefix("0x")
        && !rest.is_empty()
        && rest.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return int(rest, 16, false);
    }
    let (neg, unsigned) = match s.as_bytes()[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return int(unsigned, 10, neg);
    }
    if is_float(unsigned) {
        return Plain::Float;
    }
    Plain::Str
}

/// `(\.[0-9]+ | [0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
fn is_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    let whole = digits(&mut i);
    let mut frac = 0;
    let mut dot = false;
    if i < b.len() && b[i] == b'.' {
        dot = true;
        i += 1;
        frac = digits(&mut i);
    }
    if whole == 0 && (frac == 0 || !dot) {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}
