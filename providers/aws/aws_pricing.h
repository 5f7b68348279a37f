/*
 * providers/aws: the AWS provider's prices (aws_pricing.c) — its price
 * cache, fed by the Price List Query API (on-demand) and EC2's
 * DescribeSpotPriceHistory (spot). Private to providers/aws/aws*.c.
 */
#ifndef LUASCALE_AWS_PRICING_H
#define LUASCALE_AWS_PRICING_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "providers/aws/aws_internal.h"
#include "providers/aws/endpoints.h"
#include "runtime/executor.h"

/* Makes the provider's price cache (nothing when the config turns prices
 * off). 0, or -1 with 'err'. */
int aws_pricing_init(struct provider *p, const struct aws_env *env, struct errbuf *err);

/* provider_ops.prices and .price_failures. A fleet group is priced as its
 * capacity_type says, an Auto Scaling group as its node-template labels do
 * (pricing_capacity_of: on-demand unless a label says spot). */
void aws_prices(struct provider *p, struct provider_group *groups, size_t n, struct executor *ex);
uint64_t aws_price_failures(struct provider *p);

#endif
