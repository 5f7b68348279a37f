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

/*
 * The Price List API's URL for EC2 region 'region' into 'url' and the
 * region its requests are signed for into 'sign_region':
 * https://api.pricing.us-east-1.amazonaws.com (cn-* regions:
 * api.pricing.cn-northwest-1.amazonaws.com.cn), unless AWS_ENDPOINT_URL_PRICING
 * or AWS_ENDPOINT_URL says otherwise (and AWS_IGNORE_CONFIGURED_ENDPOINT_URLS
 * is not true). 0, or -1 with 'err' when the variable's URL is malformed.
 */
int aws_pricing_endpoint(const struct aws_env *env, const char *region, char *url, size_t len,
			 char *sign_region, size_t srlen, struct errbuf *err);

/*
 * One PriceList item of GetProducts (a JSON document in a string): its
 * on-demand price per hour in 'currency' ("USD", "CNY") when its
 * product.attributes.instanceType is 'type', else 0 (0 too when malformed).
 */
double aws_pricing_on_demand_item(const char *item, size_t len, const char *type,
				  const char *currency);

/* Makes the provider's price cache (nothing when the config turns prices
 * off). 0, or -1 with 'err'. */
int aws_pricing_init(struct provider *p, const struct aws_env *env, struct errbuf *err);

/* provider_ops.prices and .price_failures. A fleet group is priced as its
 * capacity_type says, an Auto Scaling group as its node-template labels do
 * (pricing_capacity_of: on-demand unless a label says spot). */
void aws_prices(struct provider *p, struct provider_group *groups, size_t n, struct executor *ex);
uint64_t aws_price_failures(struct provider *p);

#endif
