/**
 * The file's doc comment: it comes before the first header.
 */
namespace go petrel.test.comments # hash comment after a header

// A line comment, not a doc comment.
# A hash comment.
/* A block comment,
   not a doc comment. */

/**
 * A struct with a block doc comment.
 *
 * It has two paragraphs.
 */
struct Documented {
  /** The id field. */
  1: i64 id // trailing line comment
  /// The name field, line one.
  /// Line two.
  2: string name # trailing hash comment
  /* plain block before a field */
  3: bool active
}

/// An enum with a triple-slash doc comment.
enum Mood {
  /** Happy. */
  HAPPY
  /// Sad.
  SAD
}

/** A service. */
service Commented {
  /** Says hello. */
  string hello(/** who to greet */ 1: string who)
}
