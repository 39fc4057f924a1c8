//! How many messages a channel holds unread before a send blocks.
//!
//! A channel of a workload stands for a socket or pipe of the original benchmark. The
//! kernel bounds what one holds, and a writer that finds it full sleeps until a reader
//! frees enough of it: that sleep, and the wake-up that ends it, are scheduler events
//! the benchmark is made of. A workload says per channel what carries its messages
//! ([`Buffer`]); the kernel being modelled decides the sizes ([`SocketBuffers`], part
//! of the machine description), and [`SocketBuffers::limit`] turns the two into the
//! [`Limit`] both engines enforce.
//!
//! **Unix stream sockets** (`unix_stream_sendmsg`). Each message is one `sk_buff`,
//! charged to the writer's `sk_wmem_alloc` with its `truesize` until the reader has
//! consumed it. A send proceeds while the charge is below `sk_sndbuf` (so the last one
//! may overshoot it); a blocked writer is woken, with every other waiting writer,
//! when the reader brings the charge down to a quarter of `sk_sndbuf`
//! (`unix_writable`: `wmem_alloc << 2 <= sndbuf`). Both rules are the same in Linux
//! 2.4 (`net/unix/af_unix.c`, 2.4.17) and 6.x. What differs is `truesize`:
//!
//! * 2.4: `alloc_skb` charges `SKB_DATA_ALIGN(size) + sizeof(struct sk_buff)`
//!   (`net/core/skbuff.c`), with `SMP_CACHE_BYTES` = 32 on the P6 and a 160-byte
//!   `struct sk_buff` on i386 (`include/linux/skbuff.h` of 2.4.17: 144 bytes, plus 16
//!   with `CONFIG_NETFILTER` and `CONFIG_NET_SCHED`, which distribution kernels
//!   enabled); `sk_sndbuf` is `sysctl_wmem_default` = `SK_WMEM_MAX` = 65,535.
//!   A 100-byte message: 288 bytes; 228 fit.
//! * 6.x: `SKB_TRUESIZE`: the data area `SKB_DATA_ALIGN(size)` plus the 320-byte
//!   `skb_shared_info`, rounded up to its power-of-two `kmalloc` bucket, plus the
//!   256-byte aligned `struct sk_buff`; `sk_sndbuf` is `net.core.wmem_default`
//!   (212,992). A 100-byte message: 768 bytes; 278 fit — measured on this machine
//!   (Linux 6.18): 278 messages of 8 or 100 bytes and 93 of 1,000 bytes fill a
//!   non-blocking `socketpair(AF_UNIX, SOCK_STREAM)`, as the formula gives.

//!
//! **TCP connections over loopback** hold what the receiver's advertised window and
//! the sender's send buffer hold. On 2.4 the window of a new connection comes from
//! `tcp_rmem[1]` = 87,380 bytes through `tcp_win_from_space` (`space − space/4` with
//! `tcp_adv_win_scale` = 2): 65,535 bytes of payload; the send buffer is
//! `tcp_wmem[1]` = 16,384 bytes, and once the window is full a writer's data
//! coalesces into the send queue's tail segment, so nearly all of it is payload
//! (`net/ipv4/tcp.c`, `tcp_sendmsg`, 2.4.17). The model takes the sum, 81,919 bytes,
//! as payload: an upper bound on what one connection holds (headers and the
//! `sk_buff`s of segments sent before the window filled lower it; how far depends on
//! how the window grew, which the sources do not fix). A blocked writer is woken when
//! half is free (`tcp_write_space` wakes once the free space reaches half of what is
//! queued). On Linux 6 the buffers autotune: 42,263 messages of 100 bytes filled a
//! loopback connection with `TCP_NODELAY` on this machine (4,226,300 bytes).

//!
//! **Pipes.** 2.4's pipe is one page (`PIPE_SIZE` = 4,096 bytes, `fs/pipe.c`): a write
//! of at most `PIPE_BUF` bytes waits until that much is free, and every read wakes
//! the waiting writers. Linux 6's pipe is 16 page buffers (`PIPE_DEF_BUFFERS`); a
//! small write merges into the last one while it has room, and a read that empties a
//! full pipe's buffer wakes the writers. A page holds `4096 / bytes` messages: 640 of
//! 100 bytes in a Linux 6 pipe, 8,192 of 8 bytes and 64 of 1,000 bytes — measured on
//! this machine by filling a non-blocking pipe, as the formula gives.

use crate::ChanId;

/// A page of a pipe's buffer.
const PIPE_PAGE_BYTES: u32 = 4096;

/// What carries a channel's messages, which decides how many may wait unread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    /// Nothing bounds the channel: a send never blocks.
    Unbounded,
    /// One end of a Unix stream `socketpair`, written by any number of senders:
    /// bounded by the modelled kernel's [`SocketBuffers`].
    UnixStream,
    /// An anonymous pipe: bounded by the modelled kernel's pipe pages.
    Pipe,
    /// One direction of a loopback TCP connection: bounded by the modelled kernel's
    /// window and send buffer ([`SocketBuffers::tcp_payload_bytes`]).
    Tcp,
    /// At most `max` unread messages; a blocked sender is woken once a receive leaves
    /// at most `wake_at` (< `max`). For carriers whose bound the sources do not fix
    /// (a workload's option names the reading).
    Window { max: u32, wake_at: u32 },
}

/// The bound one channel's sends observe: a send blocks while `max` messages wait
/// unread; a receive that leaves at most `wake_at` wakes every blocked sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub max: u32,
    pub wake_at: u32,
}

/// A kernel's Unix-socket buffer accounting (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SocketBuffers {
    /// Which kernel these are (for reports), e.g. `"linux-2.4"`.
    pub name: &'static str,
    /// `sk_sndbuf` of a new socket (`sysctl_wmem_default`), bytes.
    pub sndbuf_bytes: u32,
    /// `SMP_CACHE_BYTES`: the data area is rounded up to a multiple of it.
    pub data_align: u32,
    /// Bytes of `struct skb_shared_info` counted in `truesize` (0 where the kernel
    /// does not count it).
    pub shinfo_bytes: u32,
    /// Whether the data area (with its shared info) is charged as its power-of-two
    /// `kmalloc` bucket.
    pub kmalloc_buckets: bool,
    /// `struct sk_buff` as counted in `truesize`.
    pub head_bytes: u32,
    /// Payload bytes one direction of a loopback TCP connection holds unread.
    pub tcp_payload_bytes: u32,
    /// Pages of a pipe's buffer.
    pub pipe_pages: u32,
    /// Whether writers of a full pipe wait for a whole page to be read (Linux 6) or
    /// are woken by every read (2.4).
    pub pipe_wakes_per_page: bool,
}

impl SocketBuffers {
    /// Linux 2.4 on i386 (the period machines' kernel).
    pub const LINUX_2_4: SocketBuffers = SocketBuffers {
        name: "linux-2.4",
        sndbuf_bytes: 65_535,
        data_align: 32,
        shinfo_bytes: 0,
        kmalloc_buckets: false,
        head_bytes: 160,
        tcp_payload_bytes: 65_535 + 16_384,
        pipe_pages: 1,
        pipe_wakes_per_page: false,
    };
    /// Linux 6.x on x86-64 with the default `net.core.wmem_default` (this machine's).
    pub const LINUX_6: SocketBuffers = SocketBuffers {
        name: "linux-6",
        sndbuf_bytes: 212_992,
        data_align: 64,
        shinfo_bytes: 320,
        kmalloc_buckets: true,
        head_bytes: 256,
        tcp_payload_bytes: 4_226_300,
        pipe_pages: 16,
        pipe_wakes_per_page: true,
    };

    /// The kernels by name, for machine descriptions.
    pub const ALL: [SocketBuffers; 2] = [SocketBuffers::LINUX_2_4, SocketBuffers::LINUX_6];

    /// The kernel called `name`.
    pub fn by_name(name: &str) -> Option<SocketBuffers> {
        SocketBuffers::ALL.into_iter().find(|b| b.name == name)
    }

    /// `truesize` of the `sk_buff` carrying one `bytes`-byte message.
    pub fn truesize(&self, bytes: u32) -> u64 {
        let a = self.data_align.max(1) as u64;
        let data = (bytes as u64).div_ceil(a) * a + self.shinfo_bytes as u64;
        let data = if self.kmalloc_buckets { data.next_power_of_two() } else { data };
        data + self.head_bytes as u64
    }

    /// The bound of a channel carried by `buffer` whose messages are `bytes` long
    /// (`None`: unbounded).
    pub fn limit(&self, buffer: Buffer, bytes: u32) -> Option<Limit> {
        match buffer {
            Buffer::Unbounded => None,
            Buffer::Window { max, wake_at } => Some(Limit { max: max.max(1), wake_at: wake_at.min(max.max(1) - 1) }),
            Buffer::Pipe => {
                let per_page = (PIPE_PAGE_BYTES / bytes.max(1)).max(1);
                let max = per_page * self.pipe_pages.max(1);
                let wake_at = if self.pipe_wakes_per_page { max - per_page } else { max - 1 };
                Some(Limit { max, wake_at })
            }
            Buffer::Tcp => {
                let max = (self.tcp_payload_bytes / bytes.max(1)).max(1);
                Some(Limit { max, wake_at: max / 2 })
            }
            Buffer::UnixStream => {
                let t = self.truesize(bytes);
                let snd = self.sndbuf_bytes as u64;
                // A send proceeds while the charge is below sndbuf: ceil(sndbuf / t) fit.
                let max = snd.div_ceil(t).clamp(1, u32::MAX as u64) as u32;
                // Writable again once 4 · charge <= sndbuf.
                let wake_at = ((snd / 4) / t).min(max as u64 - 1) as u32;
                Some(Limit { max, wake_at })
            }
        }
    }
}

/// Every channel's bound for `w` under `kernel` (`None`: unbounded), from the
/// workload's [`Buffer`]s and the size of the messages sent on each channel.
pub fn limits(w: &crate::Workload, kernel: &SocketBuffers) -> Vec<Option<Limit>> {
    let mut bytes = vec![0u32; w.channels as usize];
    for p in &w.programs {
        for op in &p.ops {
            if let crate::Op::Send { chan, bytes: b } = *op {
                let slot = &mut bytes[chan as usize];
                *slot = (*slot).max(b);
            }
        }
    }
    (0..w.channels).map(|c: ChanId| kernel.limit(w.buffer(c), bytes[c as usize])).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_6_matches_this_machines_socketpair() {
        // Counted by filling a non-blocking socketpair on Linux 6.18 (module docs).
        let k = SocketBuffers::LINUX_6;
        assert_eq!(k.truesize(100), 768);
        assert_eq!(k.limit(Buffer::UnixStream, 8).unwrap().max, 278);
        assert_eq!(k.limit(Buffer::UnixStream, 100).unwrap().max, 278);
        assert_eq!(k.limit(Buffer::UnixStream, 1000).unwrap().max, 93);
    }

    #[test]
    fn linux_2_4_hundred_byte_messages() {
        let k = SocketBuffers::LINUX_2_4;
        assert_eq!(k.truesize(100), 288);
        assert_eq!(k.limit(Buffer::UnixStream, 100), Some(Limit { max: 228, wake_at: 56 }));
    }

    #[test]
    fn tcp_connections_hold_the_window_and_the_send_buffer() {
        let k = SocketBuffers::LINUX_2_4;
        assert_eq!(k.limit(Buffer::Tcp, 100), Some(Limit { max: 819, wake_at: 409 }));
        assert_eq!(SocketBuffers::LINUX_6.limit(Buffer::Tcp, 100).unwrap().max, 42_263);
    }

    #[test]
    fn pipes_hold_pages_of_messages() {
        // Linux 6: counted by filling a non-blocking pipe on this machine.
        let k = SocketBuffers::LINUX_6;
        assert_eq!(k.limit(Buffer::Pipe, 8), Some(Limit { max: 8192, wake_at: 8192 - 512 }));
        assert_eq!(k.limit(Buffer::Pipe, 100).unwrap().max, 640);
        assert_eq!(k.limit(Buffer::Pipe, 1000).unwrap().max, 64);
        assert_eq!(SocketBuffers::LINUX_2_4.limit(Buffer::Pipe, 100), Some(Limit { max: 40, wake_at: 39 }));
    }

    #[test]
    fn window_and_unbounded() {
        let k = SocketBuffers::LINUX_2_4;
        assert_eq!(k.limit(Buffer::Unbounded, 100), None);
        assert_eq!(k.limit(Buffer::Window { max: 10, wake_at: 20 }, 100), Some(Limit { max: 10, wake_at: 9 }));
        assert_eq!(k.limit(Buffer::Window { max: 0, wake_at: 0 }, 100), Some(Limit { max: 1, wake_at: 0 }));
    }
}
