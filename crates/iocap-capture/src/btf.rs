//! The kernel's description of its own types (BTF, `/sys/kernel/btf/vmlinux`), read for the
//! little the raw-tracepoint programs need: where a few members lie in a few structures, and
//! the values of a few enumerators. A raw tracepoint hands its program the kernel's own
//! arguments (`struct request *`), not the formatted record a perf-event tracepoint builds,
//! so the program must know the structure's layout on the running kernel; BTF says it.
//!
//! Only what is read is parsed: the header, the types (each kind's size, to step over it),
//! structure and union members (anonymous ones looked through), enumerators, and the string
//! section. Pure: tested on a constructed image, and on the running kernel's where there is
//! one.

const MAGIC: u16 = 0xeb9f;

// kinds (include/uapi/linux/btf.h)
const INT: u32 = 1;
const PTR: u32 = 2;
const ARRAY: u32 = 3;
const STRUCT: u32 = 4;
const UNION: u32 = 5;
const ENUM: u32 = 6;
const TYPEDEF: u32 = 8;
const VOLATILE: u32 = 9;
const CONST: u32 = 10;
const RESTRICT: u32 = 11;
const FUNC_PROTO: u32 = 13;
const VAR: u32 = 14;
const DATASEC: u32 = 15;
const DECL_TAG: u32 = 17;
const TYPE_TAG: u32 = 18;
const ENUM64: u32 = 19;

/// One type: its kind, name (an offset in the strings), size (or the type it refers to) and,
/// for a structure or union, where its members start in the type section.
#[derive(Debug, Clone, Copy, Default)]
struct Type {
    kind: u32,
    name: u32,
    size_or_type: u32,
    vlen: u32,
    kind_flag: bool,
    /// The offset of its first member (or enumerator) in the type section.
    body: u32,
}

/// The types of one BTF image. Names stay offsets into the string section until a lookup
/// compares them: the running kernel's image has over 100,000 types, and a capture needs
/// seven members and a dozen enumerators.
#[derive(Debug, Default)]
pub struct Btf {
    /// By id; id 0 is `void`.
    types: Vec<Type>,
    section: Vec<u8>,
    strings: Vec<u8>,
}

fn u32_at(b: &[u8], o: usize) -> Result<u32, String> {
    b.get(o..o + 4)
        .map(|s| u32::from_le_bytes(s.try_into().expect("4 bytes")))
        .ok_or_else(|| format!("BTF ends at byte {} inside a field at {o}", b.len()))
}

impl Btf {
    /// The running kernel's types.
    pub fn kernel() -> Result<Btf, String> {
        let path = "/sys/kernel/btf/vmlinux";
        let b = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
        Btf::parse(&b)
    }

    /// The running kernel's types for a test, or `None` (said on stderr) on a kernel without
    /// them; CI's kernel has them, so there the test fails instead of passing unread.
    #[cfg(all(test, target_os = "linux"))]
    pub(crate) fn kernel_for_test() -> Option<Btf> {
        match Btf::kernel() {
            Ok(btf) => Some(btf),
            Err(e) => {
                assert!(std::env::var_os("CI").is_none(), "CI's kernel has BTF: {e}");
                eprintln!("no kernel BTF here ({e}): nothing to read");
                None
            }
        }
    }

    /// Parses a BTF image (little-endian, as the running kernel writes it).
    pub fn parse(b: &[u8]) -> Result<Btf, String> {
        if b.len() < 24 || u16::from_le_bytes([b[0], b[1]]) != MAGIC {
            return Err("not a little-endian BTF image".into());
        }
        let hdr = u32_at(b, 4)? as usize;
        let (type_off, type_len) = (u32_at(b, 8)? as usize, u32_at(b, 12)? as usize);
        let (str_off, str_len) = (u32_at(b, 16)? as usize, u32_at(b, 20)? as usize);
        let section = |off: usize, len: usize| {
            b.get(hdr + off..hdr + off + len)
                .ok_or_else(|| "a BTF section lies past the image's end".to_string())
        };
        let mut btf = Btf {
            types: vec![Type::default()],
            section: section(type_off, type_len)?.to_vec(),
            strings: section(str_off, str_len)?.to_vec(),
        };
        let mut at = 0;
        while at < btf.section.len() {
            at = btf.one(at)?;
        }
        Ok(btf)
    }

    /// The name at `off` in the string section.
    fn name(&self, off: u32) -> &[u8] {
        let s = self.strings.get(off as usize..).unwrap_or_default();
        &s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())]
    }

    /// Reads the type at `at`; returns where the next one starts.
    fn one(&mut self, at: usize) -> Result<usize, String> {
        let b = &self.section;
        let info = u32_at(b, at + 4)?;
        let (kind, vlen) = ((info >> 24) & 0x1f, (info & 0xffff) as usize);
        let body = at + 12;
        let next = match kind {
            INT | VAR | DECL_TAG => body + 4,
            ARRAY => body + 12,
            STRUCT | UNION | DATASEC | ENUM64 => body + 12 * vlen,
            ENUM | FUNC_PROTO => body + 8 * vlen,
            k if k <= TYPE_TAG => body,
            k => {
                return Err(format!(
                    "BTF type {} has an unknown kind {k}",
                    self.types.len()
                ))
            }
        };
        if next > b.len() {
            return Err(format!(
                "BTF type {} runs past the type section",
                self.types.len()
            ));
        }
        let t = Type {
            kind,
            name: u32_at(b, at)?,
            size_or_type: u32_at(b, at + 8)?,
            vlen: vlen as u32,
            kind_flag: info >> 31 == 1,
            body: body as u32,
        };
        self.types.push(t);
        Ok(next)
    }

    /// Member `m` of `t`: its name, type and offset in bits.
    fn member_at(&self, t: &Type, m: u32) -> (&[u8], u32, u32) {
        let o = (t.body + 12 * m) as usize;
        let word = |k: usize| u32_at(&self.section, o + k).expect("checked when parsed");
        let offset = word(8);
        // with kind_flag the top byte is a bitfield's size: the offset is below it
        let bits = if t.kind_flag {
            offset & 0xff_ffff
        } else {
            offset
        };
        (self.name(word(0)), word(4), bits)
    }

    /// The value of enumerator `name`.
    pub fn enumerator(&self, name: &str) -> Option<i64> {
        let word = |o: usize| u32_at(&self.section, o).expect("checked when parsed");
        for t in self
            .types
            .iter()
            .filter(|t| t.kind == ENUM || t.kind == ENUM64)
        {
            let each = if t.kind == ENUM { 8 } else { 12 };
            for m in 0..t.vlen as usize {
                let o = t.body as usize + each * m;
                if self.name(word(o)) != name.as_bytes() {
                    continue;
                }
                return Some(match t.kind {
                    ENUM => i64::from(word(o + 4) as i32),
                    _ => (u64::from(word(o + 4)) | u64::from(word(o + 8)) << 32) as i64,
                });
            }
        }
        None
    }

    /// The byte offset and size of member `member` of `struct name` (looked for through
    /// anonymous members too); refuses a bitfield.
    pub fn member(&self, name: &str, member: &str) -> Result<(u32, u32), String> {
        let id = self
            .types
            .iter()
            .position(|t| t.kind == STRUCT && t.vlen > 0 && self.name(t.name) == name.as_bytes())
            .ok_or_else(|| format!("the kernel's BTF has no struct {name}"))?;
        let (ty, bits) = self
            .find(id as u32, member.as_bytes(), 0, 0)
            .ok_or_else(|| format!("the kernel's struct {name} has no member {member}"))?;
        if bits % 8 != 0 {
            return Err(format!("{name}.{member} is a bitfield"));
        }
        let size = self
            .size(ty)
            .ok_or_else(|| format!("the size of {name}.{member} is unknown"))?;
        Ok((bits / 8, size))
    }

    /// The id of `typedef name`: a typed raw tracepoint's program names the one its
    /// tracepoint's arguments are declared by (`btf_trace_block_rq_issue`).
    pub fn typedef(&self, name: &str) -> Option<u32> {
        self.types
            .iter()
            .position(|t| t.kind == TYPEDEF && self.name(t.name) == name.as_bytes())
            .map(|id| id as u32)
    }

    /// Member `member` of type `id`, or of its anonymous members (eight deep at most, so an
    /// image whose types refer to themselves cannot recurse without end): its type and bit
    /// offset.
    fn find(&self, id: u32, member: &[u8], base: u32, depth: u32) -> Option<(u32, u32)> {
        let t = *self.types.get(id as usize)?;
        if depth > 8 || (t.kind != STRUCT && t.kind != UNION) {
            return None;
        }
        for m in 0..t.vlen {
            let (name, ty, bits) = self.member_at(&t, m);
            if name == member {
                return Some((ty, base + bits));
            }
            if name.is_empty() {
                let inner = self.resolve(ty)?;
                if let Some(found) = self.find(inner, member, base + bits, depth + 1) {
                    return Some(found);
                }
            }
        }
        None
    }

    /// Type `id` with typedefs and qualifiers looked through.
    fn resolve(&self, mut id: u32) -> Option<u32> {
        for _ in 0..32 {
            let t = self.types.get(id as usize)?;
            match t.kind {
                TYPEDEF | VOLATILE | CONST | RESTRICT | TYPE_TAG => id = t.size_or_type,
                _ => return Some(id),
            }
        }
        None
    }

    /// The size in bytes of type `id`.
    fn size(&self, id: u32) -> Option<u32> {
        let t = self.types.get(self.resolve(id)? as usize)?;
        match t.kind {
            INT | STRUCT | UNION | ENUM | ENUM64 => Some(t.size_or_type),
            PTR => Some(8),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BTF image: `int` (id 1), `typedef int sector_t` (2), `struct request { int a;
    /// union { sector_t s; }; int *p; }` (4, with the union as 3), `enum e { X = 3 }`.
    fn image() -> Vec<u8> {
        let strings = b"\0int\0sector_t\0request\0a\0s\0p\0e\0X\0";
        let s = |name: &str| {
            let at = strings
                .windows(name.len() + 1)
                .position(|w| &w[..name.len()] == name.as_bytes() && w[name.len()] == 0);
            at.unwrap() as u32
        };
        let mut t = Vec::new();
        let ty = |name: u32, kind: u32, vlen: u32, size: u32, t: &mut Vec<u8>| {
            for v in [name, kind << 24 | vlen, size] {
                t.extend_from_slice(&v.to_le_bytes());
            }
        };
        ty(s("int"), INT, 0, 4, &mut t);
        t.extend_from_slice(&32u32.to_le_bytes());
        ty(s("sector_t"), TYPEDEF, 0, 1, &mut t);
        ty(0, UNION, 1, 8, &mut t);
        for v in [s("s"), 2, 0] {
            t.extend_from_slice(&v.to_le_bytes());
        }
        ty(s("request"), STRUCT, 3, 24, &mut t);
        for v in [s("a"), 1, 0, 0, 3, 64, s("p"), 6, 128] {
            t.extend_from_slice(&v.to_le_bytes());
        }
        ty(s("e"), ENUM, 1, 4, &mut t);
        t.extend_from_slice(&s("X").to_le_bytes());
        t.extend_from_slice(&3u32.to_le_bytes());
        ty(0, PTR, 0, 1, &mut t);
        let mut b = Vec::new();
        b.extend_from_slice(&MAGIC.to_le_bytes());
        b.extend_from_slice(&[1, 0]);
        for v in [
            24u32,
            0,
            t.len() as u32,
            t.len() as u32,
            strings.len() as u32,
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&t);
        b.extend_from_slice(strings);
        b
    }

    #[test]
    fn members_are_found_through_anonymous_unions_and_typedefs() {
        let btf = Btf::parse(&image()).unwrap();
        assert_eq!(btf.member("request", "a").unwrap(), (0, 4));
        assert_eq!(btf.member("request", "s").unwrap(), (8, 4));
        assert_eq!(btf.member("request", "p").unwrap(), (16, 8));
        assert_eq!(btf.enumerator("X"), Some(3));
        assert_eq!(btf.typedef("sector_t"), Some(2));
        assert_eq!(btf.typedef("request"), None, "a struct is no typedef");
        let e = btf.member("request", "q").unwrap_err();
        assert!(e.contains("no member q"), "{e}");
        assert!(btf
            .member("bio", "a")
            .unwrap_err()
            .contains("no struct bio"));
    }

    #[test]
    fn a_cut_image_is_an_error_not_a_panic() {
        let b = image();
        for len in [0, 10, 30, b.len() - 3] {
            assert!(Btf::parse(&b[..len]).is_err(), "{len} bytes");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_running_kernel_s_request_is_found_where_it_has_btf() {
        let Some(btf) = Btf::kernel_for_test() else {
            return;
        };
        let (sector, size) = btf.member("request", "__sector").unwrap();
        assert_eq!(size, 8, "sector_t is 8 bytes");
        assert!(sector > 0 && sector < 512);
        assert_eq!(btf.member("gendisk", "major").unwrap().1, 4);
        assert_eq!(btf.enumerator("REQ_OP_WRITE"), Some(1));
        // the typed programs name these
        for tp in ["block_rq_issue", "block_rq_complete", "block_rq_requeue"] {
            assert!(btf.typedef(&format!("btf_trace_{tp}")).is_some(), "{tp}");
        }
    }
}
