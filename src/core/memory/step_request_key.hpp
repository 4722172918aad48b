#pragma once
// Every field of a request that the step's events can depend on, written out byte for byte: two
// requests with equal keys build equal event lists (the events are a function of the request and of
// estimate()'s terms, themselves a function of the request). Left out: what is read only after the
// replay or only to decide whether to replay (overhead_bytes, replay_below).

#include <string>

#include <memplan/request.hpp>

namespace memplan {

// Writes the key into `out` (emptied first) and returns it.
const std::string& step_request_key(const EstimateRequest& r, bool expandable_segments, std::string& out);

}  // namespace memplan
