//! Just enough protobuf to write an ONNX model: length-delimited messages, varints, fixed32
//! floats. ONNX's schema is proto2, so repeated integers are written one key per value, the
//! encoding every protobuf reader accepts.

/// A message under construction. Nested messages are built on their own and then appended
/// whole: protobuf puts a message's length before its bytes.
#[derive(Default)]
pub struct Message(Vec<u8>);

const VARINT: u8 = 0;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

impl Message {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(bytes: usize) -> Self {
        Self(Vec::with_capacity(bytes))
    }

    pub fn int(&mut self, field: u32, value: i64) -> &mut Self {
        self.key(field, VARINT);
        // Negative int64 values are written as their 64-bit two's complement, as protobuf does.
        self.varint(value as u64);
        self
    }

    pub fn ints(&mut self, field: u32, values: &[i64]) -> &mut Self {
        for &v in values {
            self.int(field, v);
        }
        self
    }

    pub fn float(&mut self, field: u32, value: f32) -> &mut Self {
        self.key(field, FIXED32);
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }

    pub fn bytes(&mut self, field: u32, value: &[u8]) -> &mut Self {
        self.key(field, LEN);
        self.varint(value.len() as u64);
        self.0.extend_from_slice(value);
        self
    }

    pub fn string(&mut self, field: u32, value: &str) -> &mut Self {
        self.bytes(field, value.as_bytes())
    }

    pub fn message(&mut self, field: u32, value: &Message) -> &mut Self {
        self.bytes(field, &value.0)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    fn key(&mut self, field: u32, wire: u8) {
        self.varint((u64::from(field) << 3) | u64::from(wire));
    }

    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_as_protobuf_does() {
        // Values from the protobuf encoding guide: field 1 = 150 is 08 96 01.
        let mut m = Message::new();
        m.int(1, 150);
        assert_eq!(m.into_bytes(), [0x08, 0x96, 0x01]);
        let mut m = Message::new();
        m.string(2, "testing");
        assert_eq!(m.into_bytes(), b"\x12\x07testing");
        let mut m = Message::new();
        m.int(3, -1);
        let bytes = m.into_bytes();
        assert_eq!(bytes.len(), 11, "a negative int64 takes ten bytes");
        assert_eq!(bytes[10], 0x01);
        let mut m = Message::new();
        m.float(4, 1.0);
        assert_eq!(m.into_bytes(), [0x25, 0x00, 0x00, 0x80, 0x3f]);
        let mut inner = Message::new();
        inner.int(1, 150);
        let mut outer = Message::new();
        outer.message(3, &inner);
        assert_eq!(outer.into_bytes(), [0x1a, 0x03, 0x08, 0x96, 0x01]);
    }
}
