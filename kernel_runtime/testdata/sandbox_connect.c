/* Sandbox attack: connects to 127.0.0.1 through whatever descriptor it can
 * find (an inherited socket would need no socket() call). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "kernel_runtime/testdata/dense_kernel_common.h"

int32_t dense_kernel(void** buffers, const TfRuntime* runtime) {
  struct sockaddr_in address;
  memset(&address, 0, sizeof(address));
  address.sin_family = AF_INET;
  address.sin_port = htons(9);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int fd = 0; fd < 64; ++fd) {
    if (connect(fd, (const struct sockaddr*)&address, sizeof(address)) == 0) break;
  }
  return DenseParallel(buffers, runtime);
}
