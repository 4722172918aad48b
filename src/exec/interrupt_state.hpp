#pragma once
// What the system runner reads of InterruptScope's state (interrupt.cpp).

namespace memplan {

// Interrupts (Ctrl-C, SIGTERM) since the current InterruptScope began; 0 without a scope.
int interrupt_count();

// A descriptor that becomes readable at each interrupt (drain it), or -1 without a scope.
int interrupt_wake_fd();

}  // namespace memplan
