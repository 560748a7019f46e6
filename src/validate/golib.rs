//! The few Go library functions whose behaviour (and error text) the webhook's rules expose:
//! `net.ParseMAC`, `uuid.Parse` (github.com/google/uuid) and `%q` quoting.

/// Go's `net.ParseMAC`: 6, 8 or 20 bytes as hex pairs split by `:` or `-` (one kind throughout)
/// or hex quads split by `.`; the error is Go's `*net.AddrError` text.
pub fn parse_mac(s: &str) -> Result<Vec<u8>, String> {
    let err = || format!("address {s}: invalid MAC address");
    let b = s.as_bytes();
    if b.len() < 14 {
        return Err(err());
    }
    let (group, sep) = match (b[2], b[4]) {
        (b':' | b'-', _) => (2, b[2]),
        (_, b'.') => (4, b'.'),
        _ => return Err(err()),
    };
    if !(b.len() + 1).is_multiple_of(group + 1) {
        return Err(err());
    }
    let groups = (b.len() + 1) / (group + 1);
    if !matches!(groups * group / 2, 6 | 8 | 20) {
        return Err(err());
    }
    let mut out = Vec::new();
    for i in 0..groups {
        let at = i * (group + 1);
        if i + 1 < groups && b[at + group] != sep {
            return Err(err());
        }
        for j in (at..at + group).step_by(2) {
            out.push(hex_byte(b[j], b[j + 1]).ok_or_else(err)?);
        }
    }
    Ok(out)
}

fn hex_byte(hi: u8, lo: u8) -> Option<u8> {
    let h = (hi as char).to_digit(16)?;
    let l = (lo as char).to_digit(16)?;
    Some((h * 16 + l) as u8)
}

/// Whether github.com/google/uuid's `Parse` accepts `s` (hyphenated, bare, braced or URN).
pub fn is_uuid(s: &str) -> bool {
    uuid::Uuid::try_parse(s).is_ok()
}

/// Go's `%q` for the texts that appear in the webhook's messages.
pub use bmh_bmc::go_quote as quote;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac_forms_like_go() {
        for ok in [
            "00:00:5e:00:53:01",
            "00-00-5E-00-53-01",
            "0000.5e00.5301",
            "02:00:5e:10:00:00:00:01",
            "0200.5e10.0000.0001",
            "00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01",
        ] {
            assert!(parse_mac(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "00:00:00:00:00",
            "00:00:5e:00:53",
            "00:00-5e:00:53:01",
            "0000.5e00.530g",
            "00:00:5e:00:53:0x",
            "01.02.03.04.05.06",
            "00:00:5e:00:53:01:02",
        ] {
            assert_eq!(
                parse_mac(bad).unwrap_err(),
                format!("address {bad}: invalid MAC address")
            );
        }
    }

    #[test]
    fn uuid_forms_like_google_uuid() {
        for ok in [
            "07564256-96ae-4315-ab03-8d34ece60fbb",
            "0756425696ae4315ab038d34ece60fbb",
            "{07564256-96ae-4315-ab03-8d34ece60fbb}",
            "URN:UUID:07564256-96ae-4315-ab03-8d34ece60fbb",
        ] {
            assert!(is_uuid(ok), "{ok}");
        }
        for bad in [
            "test",
            "07564256-96ae-4315-ab03-8d34ece60fbz",
            "0756425696ae4315ab038d34ece60fb",
            "07564256_96ae_4315_ab03_8d34ece60fbb",
        ] {
            assert!(!is_uuid(bad), "{bad}");
        }
    }

    #[test]
    fn quote_like_go() {
        assert_eq!(quote("eth0"), "\"eth0\"");
        assert_eq!(quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
    }
}
