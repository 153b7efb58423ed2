//! The bookshop's tools, resources, template, prompt and completion as
//! async twins: each awaits (returning `Pending`
//! twice, waking itself) and then runs the sync handler, so a server of
//! twins must answer byte for byte as the bookshop does.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use picomcp::Server;
use picomcp::completion::{CompleteOutcome, CompleteRequest, Completions};
use picomcp::prompt::{Messages, Prompt, PromptOutcome, PromptRequest};
use picomcp::resource::{Contents, ReadRequest, Resource, ResourceOutcome, ResourceTemplate};
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

async fn resource_twin<'a, const I: usize>(
    shop: &'a Shop,
    request: ReadRequest<'a>,
    contents: Contents<'_>,
) -> ResourceOutcome<'a> {
    Yield(2).await;
    (shop::RESOURCES[I].handler)(shop, request, contents)
}

async fn template_twin<'a, const I: usize>(
    shop: &'a Shop,
    request: ReadRequest<'a>,
    contents: Contents<'_>,
) -> ResourceOutcome<'a> {
    Yield(1).await;
    (shop::TEMPLATES[I].handler)(shop, request, contents)
}

async fn prompt_twin<'a>(
    shop: &'a Shop,
    request: PromptRequest<'a>,
    messages: Messages<'_>,
) -> PromptOutcome<'a> {
    Yield(3).await;
    (shop::PROMPTS[0].handler)(shop, request, messages)
}

async fn complete_twin<'a>(
    shop: &'a Shop,
    request: CompleteRequest<'a>,
    completions: Completions<'_>,
) -> CompleteOutcome<'a> {
    Yield(1).await;
    shop::complete(shop, request, completions)
}

picomcp::async_handlers! {
    /// The twins, in the bookshop's order.
    pub struct Twins for Shop {
        tools {
            GET_AUTHOR: shop::TOOLS[0].descriptor => twin::<0>,
            GET_AUTHOR_STRICT: shop::TOOLS[1].descriptor => twin::<1>,
            TOP: shop::TOOLS[2].descriptor => twin::<2>,
            RESERVE: shop::TOOLS[3].descriptor => twin::<3>,
            BLURB: shop::TOOLS[4].descriptor => twin::<4>,
            BUY: shop::TOOLS[5].descriptor => twin::<5>,
            COUNT: shop::TOOLS[6].descriptor => twin::<6>,
        }
        resources {
            CATALOG: shop::RESOURCES[0].descriptor => resource_twin::<0>,
            STOCK: shop::RESOURCES[1].descriptor => resource_twin::<1>,
        }
        templates {
            BOOK: shop::TEMPLATES[0].descriptor => template_twin::<0>,
        }
        prompts {
            RECOMMEND: shop::PROMPTS[0].descriptor => prompt_twin,
        }
        completion: complete_twin,
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

/// The twins of the resources and the template.
pub static TWIN_RESOURCES: [Resource<Shop>; 2] = [Twins::CATALOG, Twins::STOCK];
pub static TWIN_TEMPLATES: [ResourceTemplate<Shop>; 1] = [Twins::BOOK];
/// The twin of the prompt.
pub static TWIN_PROMPTS: [Prompt<Shop>; 1] = [Twins::RECOMMEND];

/// The bookshop with its tools, resources and template replaced by their
/// async twins.
pub static TWIN_SHOP: Server<'static, Shop> = shop::server()
    .tools(&TWIN_TOOLS)
    .resources(&TWIN_RESOURCES)
    .templates(&TWIN_TEMPLATES)
    .prompts(&TWIN_PROMPTS)
    .completion_awaiting();

/// The bookshop itself, with its own state (so buying on one leaves the
/// other's stock alone).
pub static SYNC_SHOP: Server<'static, Shop> = shop::server();
