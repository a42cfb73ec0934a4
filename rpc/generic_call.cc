#include "rpc/generic_call.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "grpcpp/generic/generic_stub.h"
#include "rpc/grpc_status.h"

namespace tunefleet {

std::unique_ptr<grpc::Server> StartGenericServer(
    std::shared_ptr<grpc::ServerCredentials> credentials, grpc::CallbackGenericService* service,
    std::string* address) {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", std::move(credentials), &port);
  builder.RegisterCallbackGenericService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port <= 0) return nullptr;
  *address = absl::StrCat("127.0.0.1:", port);
  return server;
}

[[nodiscard]] absl::StatusOr<std::string> UnaryGenericCall(
    std::shared_ptr<grpc::Channel> channel, const std::string& method,
    const std::vector<std::pair<std::string, std::string>>& metadata, const std::string& request) {
  grpc::GenericStub stub(std::move(channel));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  for (const auto& [key, value] : metadata) context.AddMetadata(key, value);
  grpc::Slice bytes{request};
  grpc::ByteBuffer message(&bytes, 1);  // a default ByteBuffer is not a valid message
  grpc::ByteBuffer response;
  grpc::Status status;
  absl::Notification done;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &message, &response, [&](grpc::Status s) {
    status = std::move(s);
    done.Notify();
  });
  done.WaitForNotification();
  if (!status.ok()) return FromGrpc(status);
  std::vector<grpc::Slice> slices;
  if (!response.Dump(&slices).ok()) return absl::InternalError("the response does not dump");
  std::string answer;
  for (const grpc::Slice& slice : slices)
    answer.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  return answer;
}

}  // namespace tunefleet
