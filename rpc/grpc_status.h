// The one conversion between absl::Status (what our libraries return) and
// grpc::Status (what a gRPC handler returns or a stub reports). Use it at
// the edge of every service and client so codes and messages cross the wire
// unchanged:
//
//   absl::StatusOr<proto::JobStatus> job = scheduler_->GetJob(id);
//   if (!job.ok()) return ToGrpc(job.status());
//
//   grpc::Status rpc = stub_->GetJob(&context, request, &response);
//   if (!rpc.ok()) return FromGrpc(rpc);
//
// Both code spaces are the canonical google.rpc codes, so the mapping is by
// number and keeps the message as it is.
#ifndef TUNEFLEET_RPC_GRPC_STATUS_H_
#define TUNEFLEET_RPC_GRPC_STATUS_H_

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace tunefleet {

[[nodiscard]] grpc::Status ToGrpc(const absl::Status& status);
[[nodiscard]] absl::Status FromGrpc(const grpc::Status& status);

}  // namespace tunefleet

#endif  // TUNEFLEET_RPC_GRPC_STATUS_H_
