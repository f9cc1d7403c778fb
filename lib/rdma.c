/* SPDX-License-Identifier: BSD-3-Clause */
/* rdma.c -- RDMA data plane (placeholder until the librpma transport lands) */
#include <errno.h>

#include "transport.h"

int rpmem_rdma_client_new(const char *host, const void *blob, size_t blob_len,
			  uint64_t pool_size, struct rpmem_xport **out)
{
	(void)host, (void)blob, (void)blob_len, (void)pool_size, (void)out;
	return -ENOTSUP;
}

int rpmem_rdma_usable(const char *addr)
{
	(void)addr;
	return 0;
}

int rpmem_rdma_srv_new(const char *addr, const char *port,
		       struct rpmem_rdma_srv **out)
{
	(void)addr, (void)port, (void)out;
	return -ENOTSUP;
}

void rpmem_rdma_srv_delete(struct rpmem_rdma_srv **srv)
{
	(void)srv;
}

int rpmem_rdma_expose(struct rpmem_rdma_srv *srv,
		      const struct rpmem_rdma_expo_cfg *cfg, void *blob,
		      size_t *blob_len, struct rpmem_rdma_expo **out)
{
	(void)srv, (void)cfg, (void)blob, (void)blob_len, (void)out;
	return -ENOTSUP;
}

void rpmem_rdma_unexpose(struct rpmem_rdma_expo **e)
{
	(void)e;
}
