// SPDX-License-Identifier: Apache-2.0
//
// The message of each thread's last failed call: what libompx_io's
// ompx_io_last_error answers and what a plugin keeps for
// __tgt_rtl_ompx_take_last_error. One set of rules for both:
//  - Per thread, as errno: a failure of one thread never replaces the
//    message another thread is about to read.
//  - record() replaces the message; the text that text() handed out stays
//    valid until the next record() or take() on the same thread.
//  - take() hands the message over and leaves none.
//  - While a DiversionTy is alive on the thread, record(), text() and
//    take() use the innermost diversion's message instead, and the thread's
//    own message is not touched: failures of calls made on behalf of
//    another call do not replace the text handed out to the program.
// Header only, and a template over an owner tag: every library (libompx_io,
// each plugin) names its own tag and so keeps its own messages, whatever
// the visibility of the instantiation.
#ifndef OFFLOADIO_LASTERRORSTORE_H
#define OFFLOADIO_LASTERRORSTORE_H

#include "offloadio/StaticTLS.h"

#include <string>
#include <utility>

namespace offloadio {

/// The last failure messages of the threads, kept for the owner \p OwnerTag
/// (any type, used only as a name).
template <typename OwnerTag> class LastErrorStoreTy {
public:
  /// While alive, this thread's failures are recorded here instead of in
  /// its message (see the rules above). Scopes nest; on the stack only.
  class DiversionTy {
  public:
    DiversionTy() : Outer(innermost()) { innermost() = this; }
    ~DiversionTy() { innermost() = Outer; }
    DiversionTy(const DiversionTy &) = delete;
    DiversionTy &operator=(const DiversionTy &) = delete;

    /// The last failure recorded since this scope began; "" when none.
    const std::string &message() const { return Message; }

  private:
    friend class LastErrorStoreTy;
    std::string Message;
    DiversionTy *Outer; ///< The scope this one is nested in, or null.
  };

  /// Make \p Message this thread's last failure.
  static void record(std::string Message) { current() = std::move(Message); }

  /// This thread's last failure; "" when none. Valid until the thread's
  /// next record() or take().
  static const std::string &text() { return current(); }

  /// This thread's last failure, handed over: none is left.
  static std::string take() {
    std::string Message;
    Message.swap(current());
    return Message;
  }

private:
  /// This thread's innermost diversion, or null.
  static DiversionTy *&innermost() {
    OFFLOADIO_STATIC_TLS thread_local DiversionTy *Innermost = nullptr;
    return Innermost;
  }

  /// Where this thread's failures go now.
  static std::string &current() {
    if (DiversionTy *D = innermost())
      return D->Message;
    OFFLOADIO_STATIC_TLS thread_local std::string Message;
    return Message;
  }
};

} // namespace offloadio

#endif // OFFLOADIO_LASTERRORSTORE_H
