//! What a field's Rust type is, as far as the schema is concerned: the
//! supported types, and the compile error for the rest.

use quote::quote;
use syn::{Error, Expr, GenericArgument, PathArguments, Result, Type};

use crate::Mode;

/// What a field's type is, as far as the schema is concerned.
#[derive(Clone)]
pub(crate) enum Shape {
    Str,
    FixedString(Expr),
    Int(syn::Ident),
    Float,
    Bool,
    Option(Box<Shape>),
    List {
        item: Box<Shape>,
        len: Expr,
        exact: bool,
    },
    /// `&[T]`: output only (serde cannot borrow it from a request).
    Slice(Box<Shape>),
    Nested(Type),
}

impl Shape {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Shape::Str | Shape::FixedString(_) => "string",
            Shape::Int(_) | Shape::Float => "number",
            Shape::List { .. } | Shape::Slice(_) => "array",
            _ => "other",
        }
    }
}

const INTS: &[&str] = &[
    "u8", "u16", "u32", "u64", "usize", "i8", "i16", "i32", "i64", "isize",
];

fn last_segment_args(seg: &syn::PathSegment) -> Vec<&GenericArgument> {
    match &seg.arguments {
        PathArguments::AngleBracketed(a) => a.args.iter().collect(),
        _ => Vec::new(),
    }
}

fn arg_type(a: &GenericArgument) -> Option<&Type> {
    match a {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    }
}

/// A const generic argument as an expression (`32`, `{ N }`, or a path the
/// parser saw as a type).
fn arg_expr(a: &GenericArgument) -> Option<Expr> {
    match a {
        GenericArgument::Const(e) => Some(e.clone()),
        GenericArgument::Type(Type::Path(p)) => Some(Expr::Path(syn::ExprPath {
            attrs: Vec::new(),
            qself: p.qself.clone(),
            path: p.path.clone(),
        })),
        _ => None,
    }
}

/// A type as the user wrote it (token spacing tidied).
pub(crate) fn show(ty: &Type) -> String {
    let mut s = quote!(#ty).to_string();
    for (from, to) in [
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
        ("& ", "&"),
        (" ::", "::"),
        (":: ", "::"),
        (" ;", ";"),
        ("[ ", "["),
        (" ]", "]"),
        ("( ", "("),
        (" )", ")"),
    ] {
        s = s.replace(from, to);
    }
    s
}

pub(crate) fn unsupported(ty: &Type, why: &str) -> Error {
    Error::new_spanned(
        ty,
        format!("picomcp: unsupported field type `{}`: {why}", show(ty)),
    )
}

pub(crate) fn classify(ty: &Type, mode: Mode) -> Result<Shape> {
    match ty {
        Type::Group(g) => classify(&g.elem, mode),
        Type::Paren(p) => classify(&p.elem, mode),
        Type::Reference(r) => match &*r.elem {
            Type::Path(p) if p.qself.is_none() && p.path.is_ident("str") => Ok(Shape::Str),
            Type::Slice(s) if mode == Mode::Output => {
                Ok(Shape::Slice(Box::new(classify(&s.elem, mode)?)))
            }
            Type::Slice(_) => Err(unsupported(
                ty,
                "a borrowed slice cannot be deserialized in place; use `heapless::Vec<T, N>` or `[T; N]`",
            )),
            _ => Err(unsupported(
                ty,
                "the only supported reference is `&str`; use the referenced type itself",
            )),
        },
        Type::Array(a) => Ok(Shape::List {
            item: Box::new(classify(&a.elem, mode)?),
            len: a.len.clone(),
            exact: true,
        }),
        Type::Tuple(t) if t.elems.is_empty() => Err(unsupported(
            ty,
            "`()` has no JSON Schema; leave the field out",
        )),
        Type::Tuple(_) => Err(unsupported(
            ty,
            "tuples have no named members; use a struct that derives ToolArgs/ToolOutput",
        )),
        Type::Slice(_) => Err(unsupported(ty, "unsized slice; use `heapless::Vec<T, N>`")),
        Type::Path(p) if p.qself.is_none() => {
            let Some(seg) = p.path.segments.last() else {
                return Err(unsupported(ty, "empty path"));
            };
            let name = seg.ident.to_string();
            let args = last_segment_args(seg);
            match name.as_str() {
                n if INTS.contains(&n) && args.is_empty() => Ok(Shape::Int(seg.ident.clone())),
                "u128" | "i128" => Err(unsupported(
                    ty,
                    "128-bit integers do not fit a JSON number exactly; use a 64-bit integer or a string",
                )),
                "f32" | "f64" if args.is_empty() => Ok(Shape::Float),
                "bool" if args.is_empty() => Ok(Shape::Bool),
                "char" => Err(unsupported(ty, "use `&str` or `heapless::String<1>`")),
                "str" => Err(unsupported(ty, "use `&str`")),
                "String" => match args.first().and_then(|a| arg_expr(a)) {
                    Some(n) if args.len() <= 2 => Ok(Shape::FixedString(n)),
                    _ => Err(unsupported(
                        ty,
                        "`String` allocates; use `&str` (borrowed from the request) or `heapless::String<N>`",
                    )),
                },
                "Vec" => match (args.len(), args.first().and_then(|a| arg_type(a))) {
                    (2 | 3, Some(item)) => match arg_expr(args[1]) {
                        Some(len) => Ok(Shape::List {
                            item: Box::new(classify(item, mode)?),
                            len,
                            exact: false,
                        }),
                        None => Err(unsupported(ty, "expected `heapless::Vec<T, N>`")),
                    },
                    _ => Err(unsupported(
                        ty,
                        "`Vec<T>` allocates; use `heapless::Vec<T, N>` (bounded: `maxItems` N) or `[T; N]`",
                    )),
                },
                "Option" => match args.first().and_then(|a| arg_type(a)) {
                    Some(inner) if args.len() == 1 => {
                        Ok(Shape::Option(Box::new(classify(inner, mode)?)))
                    }
                    _ => Err(unsupported(ty, "expected `Option<T>`")),
                },
                "HashMap" | "BTreeMap" | "IndexMap" | "LinearMap" | "FnvIndexMap" | "HashSet"
                | "BTreeSet" | "IndexSet" | "FnvIndexSet" => Err(unsupported(
                    ty,
                    "maps and sets have no fixed members; use a struct that derives ToolArgs/ToolOutput",
                )),
                "Box" | "Rc" | "Arc" | "Cow" | "VecDeque" | "LinkedList" | "BinaryHeap"
                | "Deque" => Err(unsupported(
                    ty,
                    "picomcp types borrow or hold fixed capacity; use `&str`, `heapless::String<N>` or `heapless::Vec<T, N>`",
                )),
                _ => Ok(Shape::Nested(ty.clone())),
            }
        }
        _ => Err(unsupported(
            ty,
            "supported: &str, heapless::String<N>, integers, floats, bool, Option<T>, heapless::Vec<T, N>, [T; N], and types deriving ToolArgs/ToolOutput",
        )),
    }
}
