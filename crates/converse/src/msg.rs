//! Generalised messages (S7, S8 in docs/sources.md): contiguous bytes whose header holds the
//! handler index.

use std::fmt;

/// Size of the message header (`CmiMsgHeaderSizeBytes`): bytes `0..4` hold
/// the handler index (little-endian `u32`), bytes `4..8` the sending PE
/// (filled in by [`crate::Pe::send`]; `u32::MAX` until sent).
pub const HEADER_SIZE: usize = 8;

/// The handler index used internally for the global-exit message.
pub(crate) const EXIT_HANDLER: u32 = u32::MAX;

/// A handler index as returned by `register_handler` (`CmiRegisterHandler`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HandlerId(pub u32);

impl HandlerId {
    /// The index as a `usize`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for HandlerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "handler #{}", self.0)
    }
}

/// A generalised message: one heap block, header then payload. The receiving
/// handler owns it (it may forward it, enqueue it or drop it).
#[derive(Clone, PartialEq, Eq)]
pub struct Msg {
    bytes: Vec<u8>,
}

impl Msg {
    /// `CmiAlloc(n)`: a zeroed message of `total_len` bytes *including* the
    /// header (so the payload is `total_len - HEADER_SIZE` bytes); handler 0.
    ///
    /// # Panics
    /// If `total_len < HEADER_SIZE`.
    pub fn alloc(total_len: usize) -> Msg {
        assert!(total_len >= HEADER_SIZE, "a message needs at least the {HEADER_SIZE}-byte header, got {total_len}");
        let mut bytes = vec![0u8; total_len];
        bytes[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        Msg { bytes }
    }

    /// A message for `handler` with a zeroed payload of `payload_len` bytes.
    pub fn with_payload_len(handler: HandlerId, payload_len: usize) -> Msg {
        let mut m = Msg::alloc(HEADER_SIZE + payload_len);
        m.set_handler(handler);
        m
    }

    /// A message for `handler` carrying a copy of `payload`.
    pub fn new(handler: HandlerId, payload: &[u8]) -> Msg {
        let mut bytes = Vec::with_capacity(HEADER_SIZE + payload.len());
        bytes.extend_from_slice(&handler.0.to_le_bytes());
        bytes.extend_from_slice(&u32::MAX.to_le_bytes());
        bytes.extend_from_slice(payload);
        Msg { bytes }
    }

    /// Reinterpret raw bytes (header included) as a message; `None` if they
    /// are shorter than the header.
    pub fn from_bytes(bytes: Vec<u8>) -> Option<Msg> {
        (bytes.len() >= HEADER_SIZE).then_some(Msg { bytes })
    }

    /// `CmiSetHandler`.
    pub fn set_handler(&mut self, handler: HandlerId) {
        self.bytes[0..4].copy_from_slice(&handler.0.to_le_bytes());
    }

    /// `CmiGetHandler`.
    pub fn handler(&self) -> HandlerId {
        HandlerId(self.raw_handler())
    }

    pub(crate) fn raw_handler(&self) -> u32 {
        u32::from_le_bytes(self.bytes[0..4].try_into().unwrap())
    }

    /// The PE that sent this message (`None` if it was never sent).
    pub fn src_pe(&self) -> Option<usize> {
        let s = u32::from_le_bytes(self.bytes[4..8].try_into().unwrap());
        (s != u32::MAX).then_some(s as usize)
    }

    pub(crate) fn set_src_pe(&mut self, pe: usize) {
        self.bytes[4..8].copy_from_slice(&(pe as u32).to_le_bytes());
    }

    /// The bytes after the header.
    pub fn payload(&self) -> &[u8] {
        &self.bytes[HEADER_SIZE..]
    }

    /// The bytes after the header, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.bytes[HEADER_SIZE..]
    }

    /// Header and payload.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Give back the underlying block.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Total size including the header.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the payload is empty (a header-only message).
    pub fn is_empty(&self) -> bool {
        self.bytes.len() == HEADER_SIZE
    }

    /// Read a little-endian `u64` at payload offset `at` (a convenience for
    /// the common case of small fixed-layout messages).
    pub fn read_u64(&self, at: usize) -> u64 {
        u64::from_le_bytes(self.payload()[at..at + 8].try_into().unwrap())
    }

    /// Write a little-endian `u64` at payload offset `at`.
    pub fn write_u64(&mut self, at: usize, v: u64) {
        self.payload_mut()[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
}

impl fmt::Debug for Msg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Msg")
            .field("handler", &self.raw_handler())
            .field("src_pe", &self.src_pe())
            .field("payload_len", &self.payload().len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_layout_and_payload() {
        let mut m = Msg::alloc(HEADER_SIZE + 16);
        assert_eq!(m.handler(), HandlerId(0));
        assert_eq!(m.src_pe(), None);
        assert_eq!(m.payload().len(), 16);
        m.set_handler(HandlerId(7));
        m.write_u64(8, 0xdead_beef);
        assert_eq!(m.handler(), HandlerId(7));
        assert_eq!(&m.as_bytes()[0..4], &7u32.to_le_bytes());
        assert_eq!(m.read_u64(8), 0xdead_beef);
        let n = Msg::new(HandlerId(3), b"hello");
        assert_eq!(n.payload(), b"hello");
        assert_eq!(n.len(), HEADER_SIZE + 5);
        let back = Msg::from_bytes(n.clone().into_bytes()).unwrap();
        assert_eq!(back, n);
        assert!(Msg::from_bytes(vec![0; 3]).is_none());
        assert!(Msg::with_payload_len(HandlerId(1), 0).is_empty());
    }

    #[test]
    #[should_panic(expected = "header")]
    fn alloc_smaller_than_header_panics() {
        Msg::alloc(HEADER_SIZE - 1);
    }
}
