/*
 * sim/aws_pricing_face: the simulated AWS cloud's prices and the Price
 * List Query API's GetProducts answer (JSON 1.1) over them. An instance
 * type costs, on demand, the price_per_hour of the first scenario group
 * that launches it; spot costs SIM_AWS_SPOT_FACTOR of that in every zone
 * of the groups that launch it. sim/clouds/aws_face.c serves it on its port.
 */
#ifndef LUASCALE_SIM_AWS_PRICING_FACE_H
#define LUASCALE_SIM_AWS_PRICING_FACE_H

#include <stddef.h>

#include "buf.h"
#include "sim/clouds/cloud_aws.h"

/* Spot at 30% of the on-demand price (a 70% discount). */
#define SIM_AWS_SPOT_FACTOR 0.3

/* The on-demand price an hour of 'type' in the simulated cloud, 0 when no
 * group launches it. Takes the cloud's lock. */
double sim_aws_price(struct sim_aws *a, const char *type);

/* Up to 'cap' zones where 'type' is launched, into zones; their count. */
size_t sim_aws_price_zones(struct sim_aws *a, const char *type, const char **zones, size_t cap);

/*
 * Answers the Price List call 'target' ("AWSPriceListService.GetProducts";
 * DescribeServices and the rest are refused) with JSON request 'body' into
 * 'out': ServiceCode AmazonEC2, TERM_MATCH filters on instanceType,
 * regionCode, operatingSystem, tenancy, preInstalledSw, capacitystatus,
 * marketoption, servicecode, location and productFamily (others refused),
 * MaxResults 1-100, NextToken. Each PriceList item is a JSON string of
 * {product: {productFamily, attributes, sku}, serviceCode, terms: {OnDemand:
 * {SKU.OFFER: {priceDimensions: {SKU.OFFER.RATE: {unit: "Hrs", pricePerUnit:
 * {USD}}}}}}} as AWS sends it. Returns the HTTP status; errors are
 * {"__type", "message"} (InvalidParameterException, ...).
 */
int sim_aws_pricing_answer(struct sim_aws *a, const char *target, const char *body, size_t len,
			   struct buf *out);

#endif
