//! What a class inherits from, read from its signature as stored (`class JsonTextReader :
//! JsonReader, IJsonLineInfo`, `class A<T> extends B<T> implements C`, `class Scope <
//! LinkedList`, `class View(Base, metaclass=M)`, Dart's `class A extends B with M`), so that a
//! method called on a subclass, or without `this.` inside one, reaches the base class that
//! defines it.

use super::arity::split_top_level;

/// The names of the types a class definition's `signature` derives from, without generics,
/// namespaces or access specifiers, in the order written; none for a language without
/// classes or a signature without a base list.
pub fn bases_in(signature: &str, family: &str) -> Vec<String> {
    let list = match family {
        "java" | "ecma" => signature
            .split_once(" extends ")
            .map(|(_, rest)| rest.replace(" implements ", ", "))
            .or_else(|| {
                signature
                    .split_once(" implements ")
                    .map(|(_, rest)| rest.to_owned())
            })
            // Kotlin's `class Buffer(…) : Source, Sink by sink`.
            .or_else(|| colon_list(signature).map(str::to_owned)),
        // `class CounterCubit extends Cubit<int> with Counting implements Sink<int>`
        "dart" => signature
            .split_once(" extends ")
            .map(|(_, rest)| rest.replace(" with ", ", ").replace(" implements ", ", ")),
        // Swift's `struct Repeat: ParsableCommand`, `class A<T>: B where T: C`.
        "csharp" | "c" | "swift" => colon_list(signature).map(str::to_owned),
        // `class TestRakeDsl < Rake::TestCase # :nodoc:`
        "ruby" => signature
            .split_once(" < ")
            .map(|(_, rest)| rest.split('#').next().unwrap_or_default().to_owned()),
        // A Rust trait's supertraits: `pub trait ColorDisplay: Display + fmt::Debug`.
        "rust" => rust_supertraits(signature),
        "python" => signature
            .split_once('(')
            .and_then(|(_, rest)| rest.rsplit_once(')'))
            .map(|(inside, _)| inside.to_owned()),
        _ => None,
    };
    let Some(list) = list else {
        return Vec::new();
    };
    let list = list.split(['{', ';']).next().unwrap_or_default();
    let list = list.split(" where ").next().unwrap_or_default();
    split_top_level(list)
        .into_iter()
        .filter(|b| !b.contains('='))
        .filter_map(|b| {
            // Kotlin's delegation: `Sink by sink`.
            let b = b.split(" by ").next().unwrap_or_default();
            let b = b
                .split_whitespace()
                .filter(|w| !matches!(*w, "public" | "private" | "protected" | "virtual"))
                .collect::<Vec<_>>()
                .join(" ");
            let b = b.split(['<', '(']).next().unwrap_or_default().trim();
            let last = b.rsplit(['.', ':']).next().unwrap_or_default();
            (!last.is_empty() && last.chars().all(|c| c.is_alphanumeric() || c == '_'))
                .then(|| last.to_owned())
        })
        .collect()
}

/// The bounds after a Rust trait's name and generics, as a list (`Display, fmt::Debug` of
/// `trait ColorDisplay: Display + fmt::Debug`); lifetimes and `?Sized` are left to the caller's
/// filter.
fn rust_supertraits(signature: &str) -> Option<String> {
    let (_, after) = signature.split_once("trait ")?;
    let rest = after.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_');
    let rest = match rest.strip_prefix('<') {
        Some(generics) => {
            let mut depth = 1usize;
            let end = generics.char_indices().find_map(|(i, c)| {
                match c {
                    '<' => depth += 1,
                    '>' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(i)
            })?;
            &generics[end + 1..]
        }
        None => rest,
    };
    let bounds = rest.trim_start().strip_prefix(':')?;
    Some(bounds.replace('+', ","))
}

/// What follows a class head's single `:` (C#, C++), not a `::` of a qualified name.
fn colon_list(signature: &str) -> Option<&str> {
    let bytes = signature.as_bytes();
    let mut depth = 0i32;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'<' | b'(' => depth += 1,
            b'>' | b')' => depth -= 1,
            b':' if depth == 0
                && bytes.get(i + 1) != Some(&b':')
                && (i == 0 || bytes[i - 1] != b':') =>
            {
                return Some(&signature[i + 1..]);
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::bases_in;

    #[test]
    fn bases_from_class_signatures() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "class CounterCubit extends Cubit<int> with Counting implements Sink<int>",
                "dart",
                &["Cubit", "Counting", "Sink"],
            ),
            (
                "public class JsonTextReader : JsonReader, IJsonLineInfo",
                "csharp",
                &["JsonReader", "IJsonLineInfo"],
            ),
            (
                "internal class BsonObject : BsonToken, IEnumerable<BsonProperty>",
                "csharp",
                &["BsonToken", "IEnumerable"],
            ),
            (
                "public class Cache<K, V> : Base<K>, ICache where K : IComparable",
                "csharp",
                &["Base", "ICache"],
            ),
            (
                "static final class Adapter<T> extends TypeAdapter<T> implements Closeable, Flushable",
                "java",
                &["TypeAdapter", "Closeable", "Flushable"],
            ),
            (
                "class CountComparator : public leveldb::Comparator, private Other",
                "c",
                &["Comparator", "Other"],
            ),
            ("class leveldb::DBImpl", "c", &[]),
            ("class TestRakeTask < Rake::TestCase", "ruby", &["TestCase"]),
            (
                "class TestRakeDsl < Rake::TestCase # :nodoc:",
                "ruby",
                &["TestCase"],
            ),
            (
                "class View(generic.Base, metaclass=Meta):",
                "python",
                &["Base"],
            ),
            (
                "export class Api extends Client<Req> {",
                "ecma",
                &["Client"],
            ),
            (
                "class RealBufferedSource(@JvmField val source: Source) : BufferedSource {",
                "java",
                &["BufferedSource"],
            ),
            (
                "open class Adapter<T : Any>(x: Int) : Base<T>(x), Sink by sink where T : Any {",
                "java",
                &["Base", "Sink"],
            ),
            (
                "public final class Plain implements Closeable, Flushable {",
                "java",
                &["Closeable", "Flushable"],
            ),
            (
                "public struct Flag<Value>: Decodable, ParsedWrapper where Value: Equatable {",
                "swift",
                &["Decodable", "ParsedWrapper"],
            ),
            ("public class Plain", "csharp", &[]),
            ("pub struct Stack<T>", "rust", &[]),
            (
                "pub(crate) trait ColorDisplay: Display + fmt::Debug",
                "rust",
                &["Display", "Debug"],
            ),
            (
                "pub trait Service<Request: Send>: Clone + 'static where Self: Sized",
                "rust",
                &["Clone"],
            ),
            ("trait Keyed<'key>: ?Sized + Keys<'key>", "rust", &["Keys"]),
            ("pub trait Plain", "rust", &[]),
        ];
        for (sig, family, want) in cases {
            assert_eq!(bases_in(sig, family), *want, "{sig}");
        }
    }
}
