/*
 * sim/azure_pricing_face: the simulated Azure cloud's prices and the Retail
 * Prices API's answer over them (GET /api/retail/prices, no auth). A VM size
 * costs, pay as you go on Linux, the price_per_hour of the first scenario
 * group whose scale set has that size, in the scenario's location (a
 * quarter more in one other region). Each size also has the meters a
 * client must tell apart: Spot, Low Priority, Windows, DevTestConsumption,
 * a one-year Reservation and a non-primary meter region's duplicate.
 * sim/clouds/azure_face.c serves it on its port.
 */
#ifndef LUASCALE_SIM_AZURE_PRICING_FACE_H
#define LUASCALE_SIM_AZURE_PRICING_FACE_H

#include "buf.h"
#include "sim/clouds/cloud_azure.h"

#define SIM_AZURE_SPOT_FACTOR 0.2          /* spot: 80% off */
#define SIM_AZURE_LOW_PRIORITY_FACTOR 0.25
#define SIM_AZURE_WINDOWS_FACTOR 1.8
#define SIM_AZURE_OTHER_REGION_FACTOR 1.25

/* The other region priced: "westus2", or "eastus" when the scenario's is westus2. */
const char *sim_azure_prices_other_region(const struct sim_azure *az);

/*
 * Answers the Retail Prices API: 'filter' ($filter, NULL: every meter) an
 * OData expression of `field eq 'value'` terms joined by `and`, `or` and
 * parentheses over serviceName, serviceFamily, armRegionName, location,
 * armSkuName, skuName, productName, meterName and priceType (values
 * compared case-sensitively, as api-version 2023-01-01-preview does);
 * 'skip' ($skip, NULL: 0); 'api_version' NULL or a version the API serves.
 * Pages hold the scenario's page_size items; NextPageLink is 'self' (the
 * face's URL up to the path) with the query of the next page, the filter
 * unencoded as Azure writes it. Takes the cloud's lock. Returns the HTTP
 * status, with {"Items", "NextPageLink", "Count", ...} or an error body
 * {"Error": {"Code", "Message"}} in 'out'.
 */
int sim_azure_prices_answer(struct sim_azure *az, const char *filter, const char *skip,
			    const char *api_version, const char *self, struct buf *out);

#endif
