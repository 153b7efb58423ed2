//! The bookshop's tools as async twins: each awaits (returning `Pending`
//! twice, waking itself) and then runs the sync handler, so a server of
//! twins must answer byte for byte as the bookshop does.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use picomcp::Server;
use picomcp::tool::{Arguments, Reply, Tool, ToolOutcome};

use super::shop::{self, Shop};

/// A future that is `Pending` `n` times (waking itself each time), then ready.
pub struct Yield(pub u32);

impl Future for Yield {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 == 0 {
            return Poll::Ready(());
        }
        self.0 -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

async fn twin<'a, const I: usize>(
    shop: &'a Shop,
    args: Arguments<'a>,
    reply: Reply<'_>,
) -> ToolOutcome<'a> {
    Yield(2).await;
    (shop::TOOLS[I].handler)(shop, args, reply)
}

picomcp::async_tools! {
    /// The twins, in the bookshop's order.
    pub struct Twins for Shop {
        GET_AUTHOR: shop::TOOLS[0].descriptor => twin::<0>,
        GET_AUTHOR_STRICT: shop::TOOLS[1].descriptor => twin::<1>,
        TOP: shop::TOOLS[2].descriptor => twin::<2>,
        RESERVE: shop::TOOLS[3].descriptor => twin::<3>,
        BLURB: shop::TOOLS[4].descriptor => twin::<4>,
        BUY: shop::TOOLS[5].descriptor => twin::<5>,
        COUNT: shop::TOOLS[6].descriptor => twin::<6>,
    }
}

/// The twins as a registry.
pub static TWIN_TOOLS: [Tool<Shop>; 7] = [
    Twins::GET_AUTHOR,
    Twins::GET_AUTHOR_STRICT,
    Twins::TOP,
    Twins::RESERVE,
    Twins::BLURB,
    Twins::BUY,
    Twins::COUNT,
];

/// The bookshop with its tools replaced by their async twins.
pub static TWIN_SHOP: Server<'static, Shop> = shop::server().tools(&TWIN_TOOLS);

/// The bookshop itself, with its own state (so buying on one leaves the
/// other's stock alone).
pub static SYNC_SHOP: Server<'static, Shop> = shop::server();
