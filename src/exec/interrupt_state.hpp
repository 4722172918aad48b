#pragma once
// What the system runner reads of InterruptScope's state (interrupt.cpp).

namespace memplan {

// Interrupts (Ctrl-C, SIGTERM) since the current InterruptScope began; 0 without a scope.
int interrupt_count();

// The signal of the first interrupt (SIGINT, SIGTERM) of the current or the last InterruptScope,
// 0 when there was none: kept after the scope ends, so the result can say how it was stopped.
int interrupt_signal();

// A descriptor that becomes readable at each interrupt (drain it), or -1 without a scope.
int interrupt_wake_fd();

}  // namespace memplan
