//! Framing for the lighting controller's RS-485 bus.
//!
//! Every message on the bus is one frame:
//!
//! ```text
//! 0x7E | kind (u8) | payload length (u16, big-endian) | payload | checksum (u8)
//! ```
//!
//! The checksum is chosen so that the kind, length and payload bytes plus the checksum
//! add up to zero (mod 256). Bytes come off the serial port in arbitrary pieces;
//! [`FrameReader`] collects them and hands out whole frames.

pub const START: u8 = 0x7E;
pub const HEADER_LEN: usize = 4;
pub const MAX_PAYLOAD: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ping,
    SetLevel,
    Status,
    Ack,
}

impl Kind {
    fn from_byte(b: u8) -> Option<Kind> {
        match b {
            0x01 => Some(Kind::Ping),
            0x10 => Some(Kind::SetLevel),
            0x20 => Some(Kind::Status),
            0x7F => Some(Kind::Ack),
            _ => None,
        }
    }

    pub fn to_byte(self) -> u8 {
        match self {
            Kind::Ping => 0x01,
            Kind::SetLevel => 0x10,
            Kind::Status => 0x20,
            Kind::Ack => 0x7F,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub kind: Kind,
    pub payload: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// The buffer ends before the frame does: wait for more bytes.
    Truncated,
    BadStart(u8),
    UnknownKind(u8),
    TooLong(usize),
    BadChecksum { expected: u8, found: u8 },
}

fn checksum(bytes: &[u8]) -> u8 {
    bytes.iter().fold(0u8, |acc, b| acc.wrapping_add(*b)).wrapping_neg()
}

pub fn encode(frame: &Frame) -> Vec<u8> {
    let len = frame.payload.len();
    assert!(len <= MAX_PAYLOAD, "payload too long");
    let mut out = Vec::with_capacity(HEADER_LEN + len + 1);
    out.push(START);
    out.push(frame.kind.to_byte());
    out.extend_from_slice(&(len as u16).to_be_bytes());
    out.extend_from_slice(&frame.payload);
    out.push(checksum(&out[1..]));
    out
}

/// Decode the frame at the start of `buf`; on success, also how many bytes it took.
pub fn decode(buf: &[u8]) -> Result<(Frame, usize), FrameError> {
    if buf.len() < HEADER_LEN {
        return Err(FrameError::Truncated);
    }
    if buf[0] != START {
        return Err(FrameError::BadStart(buf[0]));
    }
    let kind = Kind::from_byte(buf[1]).ok_or(FrameError::UnknownKind(buf[1]))?;
    let len = u16::from_be_bytes([buf[2], buf[3]]) as usize;
    if len > MAX_PAYLOAD {
        return Err(FrameError::TooLong(len));
    }
    let end = HEADER_LEN + len;
    if buf.len() <= end {
        return Err(FrameError::Truncated);
    }
    let found = buf[end];
    let expected = checksum(&buf[1..end]);
    if found != expected {
        return Err(FrameError::BadChecksum { expected, found });
    }
    let frame = Frame { kind, payload: buf[HEADER_LEN..end].to_vec() };
    Ok((frame, end + 1))
}

/// Collects bytes from the serial port and yields whole frames.
#[derive(Debug, Default)]
pub struct FrameReader {
    buf: Vec<u8>,
}

impl FrameReader {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole frame, or `Ok(None)` until enough bytes have arrived. After a
    /// framing error the reader skips to the next start byte, so one corrupted frame
    /// does not stall the bus.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, FrameError> {
        match decode(&self.buf) {
            Ok((frame, used)) => {
                self.buf.drain(..used);
                Ok(Some(frame))
            }
            Err(FrameError::Truncated) => Ok(None),
            Err(e) => {
                let skip = self.buf[1..].iter().position(|&b| b == START).map_or(self.buf.len(), |i| i + 1);
                self.buf.drain(..skip);
                Err(e)
            }
        }
    }

    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let f = Frame { kind: Kind::SetLevel, payload: vec![3, 200] };
        let bytes = encode(&f);
        assert_eq!(bytes, vec![0x7E, 0x10, 0, 2, 3, 200, 0x23]);
        assert_eq!(decode(&bytes), Ok((f, 7)));
    }

    #[test]
    fn reader_waits_for_a_header() {
        let mut r = FrameReader::new();
        r.push(&[0x7E, 0x01]);
        assert_eq!(r.next_frame(), Ok(None));
        assert_eq!(r.buffered(), 2);
    }
}
