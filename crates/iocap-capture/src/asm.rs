//! A small eBPF assembler: the instructions the capture's two programs need, with labels.
//!
//! Why the programs are assembled here, at run time, instead of compiled from C or Rust: `cargo
//! build` needs nothing but the Rust toolchain (no clang, no bpf-linker, no nightly), no object
//! file is committed that could drift from its source (the source is what runs, so the CI check
//! that "the object matches its source" holds by construction), and the tracepoints' field
//! offsets are read from the running kernel's tracefs and written into the instructions, so no
//! BTF relocation (CO-RE) is needed. The encoding is the kernel's (Documentation/bpf/
//! standardization/instruction-set.rst): 8 bytes per instruction, `ld_imm64` two.

/// A register: r0 return value, r1-r5 arguments (clobbered by calls), r6-r9 kept across
/// calls, r10 the read-only frame pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reg(pub u8);

pub const R0: Reg = Reg(0);
pub const R1: Reg = Reg(1);
pub const R2: Reg = Reg(2);
pub const R3: Reg = Reg(3);
pub const R4: Reg = Reg(4);
pub const R6: Reg = Reg(6);
pub const R7: Reg = Reg(7);
pub const R8: Reg = Reg(8);
pub const R9: Reg = Reg(9);
pub const FP: Reg = Reg(10);

/// Access sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    B = 0x10,
    H = 0x08,
    W = 0x00,
    DW = 0x18,
}

/// Conditional jumps (64-bit compares).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    Eq = 0x10,
    Ne = 0x50,
    Gt = 0x20,
    Slt = 0xc0,
}

// classes and modes
const LD: u8 = 0x00;
const LDX: u8 = 0x01;
const ST: u8 = 0x02;
const STX: u8 = 0x03;
const ALU64: u8 = 0x07;
const JMP: u8 = 0x05;
const MEM: u8 = 0x60;
const IMM: u8 = 0x00;
const ATOMIC: u8 = 0xc0;
const K: u8 = 0x00;
const X: u8 = 0x08;
// ALU operations
const ADD: u8 = 0x00;
const OR: u8 = 0x40;
const LSH: u8 = 0x60;
const RSH: u8 = 0x70;
const MOV: u8 = 0xb0;
// jumps
const JA: u8 = 0x00;
const CALL: u8 = 0x80;
const EXIT: u8 = 0x90;
/// `src` of an `ld_imm64` whose immediate is a map's file descriptor.
const PSEUDO_MAP_FD: u8 = 1;

/// One encoded instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    pub code: u8,
    pub dst: u8,
    pub src: u8,
    pub off: i16,
    pub imm: i32,
}

impl Insn {
    /// The 8 bytes the kernel reads (little-endian host: dst in the low nibble).
    pub fn bytes(&self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[0] = self.code;
        b[1] = (self.src << 4) | (self.dst & 0x0f);
        b[2..4].copy_from_slice(&self.off.to_le_bytes());
        b[4..8].copy_from_slice(&self.imm.to_le_bytes());
        b
    }
}

fn insn(code: u8, dst: Reg, src: Reg, off: i16, imm: i32) -> Insn {
    Insn {
        code,
        dst: dst.0,
        src: src.0,
        off,
        imm,
    }
}

/// A program being written: instructions, and jumps waiting for their labels.
#[derive(Default)]
pub struct Asm {
    insns: Vec<Insn>,
    labels: Vec<Option<usize>>,
    fixups: Vec<(usize, usize)>,
}

/// A place in the program a jump goes to, made before it is placed.
#[derive(Clone, Copy, Debug)]
pub struct Label(usize);

impl Asm {
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// Places `l` at the next instruction.
    pub fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.insns.len());
    }

    fn push(&mut self, i: Insn) -> &mut Self {
        self.insns.push(i);
        self
    }

    pub fn mov_imm(&mut self, dst: Reg, imm: i32) -> &mut Self {
        self.push(insn(ALU64 | MOV | K, dst, R0, 0, imm))
    }
    pub fn mov(&mut self, dst: Reg, src: Reg) -> &mut Self {
        self.push(insn(ALU64 | MOV | X, dst, src, 0, 0))
    }
    pub fn add_imm(&mut self, dst: Reg, imm: i32) -> &mut Self {
        self.push(insn(ALU64 | ADD | K, dst, R0, 0, imm))
    }
    pub fn or(&mut self, dst: Reg, src: Reg) -> &mut Self {
        self.push(insn(ALU64 | OR | X, dst, src, 0, 0))
    }
    pub fn lsh_imm(&mut self, dst: Reg, imm: i32) -> &mut Self {
        self.push(insn(ALU64 | LSH | K, dst, R0, 0, imm))
    }
    pub fn rsh_imm(&mut self, dst: Reg, imm: i32) -> &mut Self {
        self.push(insn(ALU64 | RSH | K, dst, R0, 0, imm))
    }
    /// `dst = *(size *)(src + off)`
    pub fn load(&mut self, size: Size, dst: Reg, src: Reg, off: i16) -> &mut Self {
        self.push(insn(LDX | MEM | size as u8, dst, src, off, 0))
    }
    /// `*(size *)(dst + off) = src`
    pub fn store(&mut self, size: Size, dst: Reg, off: i16, src: Reg) -> &mut Self {
        self.push(insn(STX | MEM | size as u8, dst, src, off, 0))
    }
    /// `*(size *)(dst + off) = imm`
    pub fn store_imm(&mut self, size: Size, dst: Reg, off: i16, imm: i32) -> &mut Self {
        self.push(insn(ST | MEM | size as u8, dst, R0, off, imm))
    }
    /// `lock *(u64 *)(dst + off) += src`
    pub fn atomic_add64(&mut self, dst: Reg, off: i16, src: Reg) -> &mut Self {
        self.push(insn(
            STX | ATOMIC | Size::DW as u8,
            dst,
            src,
            off,
            ADD as i32,
        ))
    }
    /// `dst = map` (the map's fd, which the loader turns into the map).
    pub fn ld_map_fd(&mut self, dst: Reg, fd: i32) -> &mut Self {
        self.push(insn(
            LD | IMM | Size::DW as u8,
            dst,
            Reg(PSEUDO_MAP_FD),
            0,
            fd,
        ));
        self.push(insn(0, R0, R0, 0, 0))
    }
    pub fn call(&mut self, helper: i32) -> &mut Self {
        self.push(insn(JMP | CALL, R0, R0, 0, helper))
    }
    pub fn exit(&mut self) -> &mut Self {
        self.push(insn(JMP | EXIT, R0, R0, 0, 0))
    }
    /// `if dst <cond> imm goto l`
    pub fn jump_imm(&mut self, cond: Cond, dst: Reg, imm: i32, l: Label) -> &mut Self {
        self.fixups.push((self.insns.len(), l.0));
        self.push(insn(JMP | cond as u8 | K, dst, R0, 0, imm))
    }
    /// `if dst <cond> src goto l`
    pub fn jump_reg(&mut self, cond: Cond, dst: Reg, src: Reg, l: Label) -> &mut Self {
        self.fixups.push((self.insns.len(), l.0));
        self.push(insn(JMP | cond as u8 | X, dst, src, 0, 0))
    }
    pub fn goto(&mut self, l: Label) -> &mut Self {
        self.fixups.push((self.insns.len(), l.0));
        self.push(insn(JMP | JA, R0, R0, 0, 0))
    }

    /// The program, every jump resolved.
    pub fn finish(mut self) -> Vec<Insn> {
        for &(at, l) in &self.fixups {
            let target = self.labels[l].expect("every label used is bound");
            self.insns[at].off = (target as i64 - at as i64 - 1) as i16;
        }
        self.insns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(i: &Insn) -> String {
        i.bytes().iter().map(|b| format!("{b:02x}")).collect()
    }

    // Encodings as llvm-objdump prints them for the same instructions.
    #[test]
    fn instructions_encode_as_the_kernel_reads_them() {
        let mut a = Asm::default();
        a.mov_imm(R0, 0) // b7 00 00 00 00 00 00 00   r0 = 0
            .mov(R6, R1) // bf 16 00 00 00 00 00 00   r6 = r1
            .load(Size::W, R7, R6, 8) // 61 67 08 00 00 00 00 00   r7 = *(u32 *)(r6 + 8)
            .store(Size::DW, FP, -8, R1) // 7b 1a f8 ff 00 00 00 00   *(u64 *)(r10 - 8) = r1
            .store_imm(Size::W, FP, -12, 0) // 62 0a f4 ff 00 00 00 00
            .add_imm(R2, -16) // 07 02 00 00 f0 ff ff ff   r2 += -16
            .rsh_imm(R0, 32) // 77 00 00 00 20 00 00 00   r0 >>= 32
            .call(5) // 85 00 00 00 05 00 00 00   call 5
            .atomic_add64(R0, 0, R1) // db 10 00 00 00 00 00 00   lock *(u64 *)(r0 + 0) += r1
            .exit(); // 95 00 00 00 00 00 00 00
        let p = a.finish();
        let want = [
            "b700000000000000",
            "bf16000000000000",
            "6167080000000000",
            "7b1af8ff00000000",
            "620af4ff00000000",
            "07020000f0ffffff",
            "7700000020000000",
            "8500000005000000",
            "db10000000000000",
            "9500000000000000",
        ];
        assert_eq!(p.iter().map(hex).collect::<Vec<_>>(), want);
    }

    #[test]
    fn a_map_load_takes_two_slots_and_jumps_land_on_their_labels() {
        let mut a = Asm::default();
        let out = a.label();
        a.jump_imm(Cond::Eq, R0, 0, out); // 0: skips the two-slot load
        a.ld_map_fd(R1, 7); // 1, 2
        a.bind(out);
        a.exit(); // 3
        let p = a.finish();
        assert_eq!(hex(&p[0]), "1500020000000000"); // if r0 == 0 goto +2
        assert_eq!(hex(&p[1]), "1811000007000000"); // r1 = map fd 7
        assert_eq!(hex(&p[2]), "0000000000000000");
    }

    #[test]
    fn a_jump_on_two_registers_names_both() {
        let mut a = Asm::default();
        let out = a.label();
        a.jump_reg(Cond::Ne, R1, R2, out); // if r1 != r2 goto +1
        a.exit();
        a.bind(out);
        a.exit();
        assert_eq!(hex(&a.finish()[0]), "5d21010000000000");
    }
}
