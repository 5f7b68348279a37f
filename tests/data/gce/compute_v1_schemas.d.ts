// Excerpt of @googleapis/compute 42.0.0, file build/v1.d.ts (namespace compute_v1):
// the Schema$ interfaces the simulator's GCE face answers with, verbatim.
    export interface Schema$InstanceGroupManager {
        /**
         * Specifies configuration that overrides the instance template configuration
         * for the group.
         */
        allInstancesConfig?: Schema$InstanceGroupManagerAllInstancesConfig;
        /**
         * The autohealing policy for this managed instance group. You can specify
         * only one value.
         */
        autoHealingPolicies?: Schema$InstanceGroupManagerAutoHealingPolicy[];
        /**
         * The base instance name is a prefix that you want to attach to the names of
         * all VMs in a MIG. The maximum character length is 58 and the name must
         * comply with RFC1035 format.
         *
         * When a VM is created in the group, the MIG appends a hyphen and a random
         * four-character string to the base instance name. If you want the MIG to
         * assign sequential numbers instead of a random string, then end the base
         * instance name with a hyphen followed by one or more hash symbols. The hash
         * symbols indicate the number of digits. For example, a base instance name of
         * "vm-###" results in "vm-001" as a VM name.
         * @pattern
         * [a-z](([-a-z0-9]{0,57\})|([-a-z0-9]{0,51\}-#{1,10\}(\\[[0-9]{1,10\}\\])?))
         */
        baseInstanceName?: string | null;
        /**
         * Output only. The creation timestamp for this managed instance group inRFC3339
         * text format.
         */
        creationTimestamp?: string | null;
        /**
         * Output only. The list of instance actions and the number of instances
         * in this managed instance group that are scheduled for each of those
         * actions.
         */
        currentActions?: Schema$InstanceGroupManagerActionsSummary;
        /**
         * An optional description of this resource.
         */
        description?: string | null;
        /**
         * Policy specifying the intended distribution of managed instances across
         * zones in a regional managed instance group.
         */
        distributionPolicy?: Schema$DistributionPolicy;
        /**
         * Fingerprint of this resource. This field may be used in optimistic locking.
         * It will be ignored when inserting an InstanceGroupManager. An up-to-date
         * fingerprint must be provided in order to update the InstanceGroupManager,
         * otherwise the request will fail with error412 conditionNotMet.
         *
         * To see the latest fingerprint, make a get() request to
         * retrieve an InstanceGroupManager.
         */
        fingerprint?: string | null;
        /**
         * Output only. A unique identifier for this resource type. The server
         * generates this identifier.
         */
        id?: string | null;
        /**
         * Instance flexibility allowing MIG to create VMs from multiple
         * types of machines.
         * Instance flexibility configuration on MIG overrides instance
         * template configuration.
         */
        instanceFlexibilityPolicy?: Schema$InstanceGroupManagerInstanceFlexibilityPolicy;
        /**
         * Output only. The URL of the Instance Group resource.
         */
        instanceGroup?: string | null;
        /**
         * The repair policy for this managed instance group.
         */
        instanceLifecyclePolicy?: Schema$InstanceGroupManagerInstanceLifecyclePolicy;
        /**
         * The URL of the instance template that is specified for this managed
         * instance group. The group uses this template to create all new instances
         * in the managed instance group. The templates for existing instances in the
         * group do not change unless you run recreateInstances, runapplyUpdatesToInstances, or set the group'supdatePolicy.type to PROACTIVE.
         */
        instanceTemplate?: string | null;
        /**
         * Output only. The resource type, which is alwayscompute#instanceGroupManager for managed instance groups.
         */
        kind?: string | null;
        /**
         * Pagination behavior of the listManagedInstances API method for
         * this managed instance group.
         */
        listManagedInstancesResults?: string | null;
        /**
         * The name of the managed instance group. The name must be 1-63 characters
         * long, and comply withRFC1035.
         */
        name?: string | null;
        /**
         * [Output Only] Named ports configured on the Instance Groups complementary
         * to this Instance Group Manager.
         */
        namedPorts?: Schema$NamedPort[];
        /**
         * Output only. [Output Only] The URL of theregion
         * where the managed instance group resides (for regional resources).
         */
        region?: string | null;
        /**
         * Resource policies for this managed instance group.
         */
        resourcePolicies?: Schema$InstanceGroupManagerResourcePolicies;
        /**
         * Output only. Reserved for future use.
         */
        satisfiesPzi?: boolean | null;
        /**
         * Output only. Reserved for future use.
         */
        satisfiesPzs?: boolean | null;
        /**
         * Output only. The URL for this managed instance group. The server defines
         * this URL.
         */
        selfLink?: string | null;
        /**
         * Standby policy for stopped and suspended instances.
         */
        standbyPolicy?: Schema$InstanceGroupManagerStandbyPolicy;
        /**
         * Stateful configuration for this Instanced Group Manager
         */
        statefulPolicy?: Schema$StatefulPolicy;
        /**
         * Output only. The status of this managed instance group.
         */
        status?: Schema$InstanceGroupManagerStatus;
        /**
         * The URLs for all TargetPool resources to which instances in theinstanceGroup field are added. The target pools automatically
         * apply to all of the instances in the managed instance group.
         */
        targetPools?: string[] | null;
        /**
         * The target number of running instances for this managed instance group.
         * You can reduce this number by using the instanceGroupManager
         * deleteInstances or abandonInstances methods. Resizing the group also
         * changes this number.
         */
        targetSize?: number | null;
        /**
         * The policy that specifies how the MIG creates its VMs to achieve the target
         * size.
         */
        targetSizePolicy?: Schema$InstanceGroupManagerTargetSizePolicy;
        /**
         * The target number of stopped instances for this managed instance group.
         * This number changes when you:
         *
         *    - Stop instance using the stopInstances
         *    method or start instances using the startInstances
         *    method.
         *    - Manually change the targetStoppedSize using the update
         *    method.
         */
        targetStoppedSize?: number | null;
        /**
         * The target number of suspended instances for this managed instance group.
         * This number changes when you:
         *
         *    - Suspend instance using the suspendInstances
         *    method or resume instances using the resumeInstances
         *    method.
         *    - Manually change the targetSuspendedSize using the update
         *    method.
         */
        targetSuspendedSize?: number | null;
        /**
         * The update policy for this managed instance group.
         */
        updatePolicy?: Schema$InstanceGroupManagerUpdatePolicy;
        /**
         * Specifies the instance templates used by this managed instance group to
         * create instances.
         *
         * Each version is defined by an instanceTemplate and aname. Every version can appear at most once per instance
         * group. This field overrides the top-level instanceTemplate
         * field. Read more about therelationships
         * between these fields. Exactly one version must leave thetargetSize field unset. That version will be applied to all
         * remaining instances. For more information, read aboutcanary
         * updates.
         */
        versions?: Schema$InstanceGroupManagerVersion[];
        /**
         * Output only. The URL of azone
         * where the managed instance group is located (for zonal resources).
         */
        zone?: string | null;
    }

    export interface Schema$InstanceGroupManagerList {
        /**
         * Output only. Unique identifier for the resource; defined by the server.
         */
        id?: string | null;
        /**
         * A list of InstanceGroupManager resources.
         */
        items?: Schema$InstanceGroupManager[];
        /**
         * Output only. The resource type, which is always compute#instanceGroupManagerList for a
         * list of managed instance groups.
         */
        kind?: string | null;
        /**
         * Output only. This token allows you to get the next page of results for
         * list requests. If the number of results is larger thanmaxResults, use the nextPageToken as a value for
         * the query parameter pageToken in the next list request.
         * Subsequent list requests will have their own nextPageToken to
         * continue paging through the results.
         */
        nextPageToken?: string | null;
        /**
         * Output only. Server-defined URL for this resource.
         */
        selfLink?: string | null;
        /**
         * Output only. Informational warning message.
         */
        warning?: {
            code?: string;
            data?: Array<{
                key?: string;
                value?: string;
            }>;
            message?: string;
        } | null;
    }

    export interface Schema$InstanceGroupManagerAggregatedList {
        /**
         * Output only. Unique identifier for the resource; defined by the server.
         */
        id?: string | null;
        /**
         * A list of InstanceGroupManagersScopedList resources.
         */
        items?: {
            [key: string]: Schema$InstanceGroupManagersScopedList;
        } | null;
        /**
         * Output only. The resource type, which is alwayscompute#instanceGroupManagerAggregatedList for an aggregated
         * list of managed instance groups.
         */
        kind?: string | null;
        /**
         * Output only. This token allows you to get the next page of results for
         * list requests. If the number of results is larger thanmaxResults, use the nextPageToken as a value for
         * the query parameter pageToken in the next list request.
         * Subsequent list requests will have their own nextPageToken to
         * continue paging through the results.
         */
        nextPageToken?: string | null;
        /**
         * Output only. Server-defined URL for this resource.
         */
        selfLink?: string | null;
        /**
         * Output only. Unreachable resources.
         */
        unreachables?: string[] | null;
        /**
         * Output only. Informational warning message.
         */
        warning?: {
            code?: string;
            data?: Array<{
                key?: string;
                value?: string;
            }>;
            message?: string;
        } | null;
    }

    export interface Schema$RegionInstanceGroupManagerList {
        /**
         * Output only. Unique identifier for the resource; defined by the server.
         */
        id?: string | null;
        /**
         * A list of InstanceGroupManager resources.
         */
        items?: Schema$InstanceGroupManager[];
        /**
         * Output only. The resource type, which is always compute#instanceGroupManagerList for a
         * list of managed instance groups that exist in th regional scope.
         */
        kind?: string | null;
        /**
         * Output only. This token allows you to get the next page of results for
         * list requests. If the number of results is larger thanmaxResults, use the nextPageToken as a value for
         * the query parameter pageToken in the next list request.
         * Subsequent list requests will have their own nextPageToken to
         * continue paging through the results.
         */
        nextPageToken?: string | null;
        /**
         * Output only. Server-defined URL for this resource.
         */
        selfLink?: string | null;
        /**
         * Output only. Informational warning message.
         */
        warning?: {
            code?: string;
            data?: Array<{
                key?: string;
                value?: string;
            }>;
            message?: string;
        } | null;
    }

    export interface Schema$InstanceGroupManagersListManagedInstancesResponse {
        /**
         * Output only. [Output Only] The list of instances in the managed instance group.
         */
        managedInstances?: Schema$ManagedInstance[];
        /**
         * Output only. [Output Only] This token allows you to get the next page of results for
         * list requests. If the number of results is larger thanmaxResults, use the nextPageToken as a value for
         * the query parameter pageToken in the next list request.
         * Subsequent list requests will have their own nextPageToken to
         * continue paging through the results.
         */
        nextPageToken?: string | null;
    }

    export interface Schema$RegionInstanceGroupManagersListInstancesResponse {
        /**
         * A list of managed instances.
         */
        managedInstances?: Schema$ManagedInstance[];
        /**
         * Output only. [Output Only] This token allows you to get the next page of results for
         * list requests. If the number of results is larger thanmaxResults, use the nextPageToken as a value for
         * the query parameter pageToken in the next list request.
         * Subsequent list requests will have their own nextPageToken to
         * continue paging through the results.
         */
        nextPageToken?: string | null;
    }

    export interface Schema$ManagedInstance {
        /**
         * Output only. [Output Only] The current action that the managed instance group has
         * scheduled for the instance. Possible values:
         *
         *    - NONE The instance is running, and the managed
         *    instance group does not have any scheduled actions for this instance.
         *    - CREATING The managed instance group is creating this
         *    instance. If the group fails to create this instance, it will try again
         *    until it is successful.
         *    - CREATING_WITHOUT_RETRIES The managed instance group
         *    is attempting to create this instance only once. If the group fails
         *    to create this instance, it does not try again and the group'stargetSize value is decreased instead.
         *    - RECREATING The managed instance group is recreating
         *    this instance.
         *    - DELETING The managed instance group is permanently
         *    deleting this instance.
         *    - ABANDONING The managed instance group is abandoning
         *    this instance. The instance will be removed from the instance group
         *    and from any target pools that are associated with this group.
         *    - RESTARTING The managed instance group is restarting
         *    the instance.
         *    - REFRESHING The managed instance group is applying
         *    configuration changes to the instance without stopping it. For example,
         *    the group can update the target pool list for an instance without
         *    stopping that instance.
         *    - VERIFYING The managed instance group has created the
         *    instance and it is in the process of being verified.
         */
        currentAction?: string | null;
        /**
         * Output only. [Output only] The unique identifier for this resource. This field is empty
         * when instance does not exist.
         */
        id?: string | null;
        /**
         * Output only. [Output Only] The URL of the instance. The URL can exist even if the
         * instance has not yet been created.
         */
        instance?: string | null;
        /**
         * Output only. [Output Only] Health state of the instance per health-check.
         */
        instanceHealth?: Schema$ManagedInstanceInstanceHealth[];
        /**
         * Output only. [Output Only] The status of the instance. This field is empty when
         * the instance does not exist.
         */
        instanceStatus?: string | null;
        /**
         * Output only. [Output Only] Information about the last attempt to create or delete
         * the instance.
         */
        lastAttempt?: Schema$ManagedInstanceLastAttempt;
        /**
         * Output only. [Output Only] The name of the instance. The name always exists even if the
         * instance has not yet been created.
         */
        name?: string | null;
        /**
         * Output only. [Output Only] Preserved state applied from per-instance config
         * for this instance.
         */
        preservedStateFromConfig?: Schema$PreservedState;
        /**
         * Output only. [Output Only] Preserved state generated based on stateful policy
         * for this instance.
         */
        preservedStateFromPolicy?: Schema$PreservedState;
        /**
         * Output only. [Output Only] Instance properties selected for this instance resulting from
         * InstanceFlexibilityPolicy.
         */
        propertiesFromFlexibilityPolicy?: Schema$ManagedInstancePropertiesFromFlexibilityPolicy;
        /**
         * Output only. Information about the termination timestamp of the instance, if applicable.
         */
        scheduling?: Schema$ManagedInstanceScheduling;
        /**
         * Output only. Specifies the graceful shutdown details if the instance is in
         * `PENDING_STOP` state or there is a programmed stop scheduled.
         */
        shutdownDetails?: Schema$ManagedInstanceShutdownDetails;
        /**
         * Output only. The eventual status of the instance. The instance group
         * manager will not be identified as stable till each managed instance reaches
         * its targetStatus.
         */
        targetStatus?: string | null;
        /**
         * Output only. [Output Only] Intended version of this instance.
         */
        version?: Schema$ManagedInstanceVersion;
    }

    export interface Schema$Operation {
        /**
         * [Output Only] The value of `requestId` if you provided it in the request.
         * Not present otherwise.
         */
        clientOperationId?: string | null;
        /**
         * [Deprecated] This field is deprecated.
         */
        creationTimestamp?: string | null;
        /**
         * [Output Only] A textual description of the operation, which is
         * set when the operation is created.
         */
        description?: string | null;
        /**
         * [Output Only] The time that this operation was completed. This value is inRFC3339
         * text format.
         */
        endTime?: string | null;
        /**
         * [Output Only] If errors are generated during processing of the operation,
         * this field will be populated.
         */
        error?: {
            errors?: Array<{
                code?: string;
                errorDetails?: Array<{
                    errorInfo?: Schema$ErrorInfo;
                    help?: Schema$Help;
                    localizedMessage?: Schema$LocalizedMessage;
                    quotaInfo?: Schema$QuotaExceededInfo;
                }>;
                location?: string;
                message?: string;
            }>;
        } | null;
        /**
         * Output only. Metadata for GetHealth operations.
         */
        getHealthOperationMetadata?: Schema$GetHealthOperationMetadata;
        getVersionOperationMetadata?: Schema$GetVersionOperationMetadata;
        /**
         * [Output Only] If the operation fails, this field contains the HTTP error
         * message that was returned, such as `NOT FOUND`.
         */
        httpErrorMessage?: string | null;
        /**
         * [Output Only] If the operation fails, this field contains the HTTP error
         * status code that was returned. For example, a `404` means the
         * resource was not found.
         */
        httpErrorStatusCode?: number | null;
        /**
         * [Output Only] The unique identifier for the operation. This identifier is
         * defined by the server.
         */
        id?: string | null;
        /**
         * [Output Only] The time that this operation was requested.
         * This value is inRFC3339
         * text format.
         */
        insertTime?: string | null;
        instancesBulkInsertOperationMetadata?: Schema$InstancesBulkInsertOperationMetadata;
        /**
         * Output only. [Output Only] Type of the resource. Always `compute#operation` for
         * Operation resources.
         */
        kind?: string | null;
        /**
         * [Output Only] Name of the operation.
         */
        name?: string | null;
        /**
         * Output only. [Output Only] An ID that represents a group of operations, such as when a
         * group of operations results from a `bulkInsert` API request.
         */
        operationGroupId?: string | null;
        /**
         * [Output Only] The type of operation, such as `insert`,
         * `update`, or `delete`, and so on.
         */
        operationType?: string | null;
        /**
         * [Output Only] An optional progress indicator that ranges from 0 to 100.
         * There is no requirement that this be linear or support any granularity of
         * operations. This should not be used to guess when the operation will be
         * complete. This number should monotonically increase as the operation
         * progresses.
         */
        progress?: number | null;
        /**
         * [Output Only] The URL of the region where the operation resides. Only
         * applicable when performing regional operations.
         */
        region?: string | null;
        /**
         * [Output Only] Server-defined URL for the resource.
         */
        selfLink?: string | null;
        /**
         * Output only. [Output Only] If the operation is for projects.setCommonInstanceMetadata,
         * this field will contain information on all underlying zonal actions and
         * their state.
         */
        setCommonInstanceMetadataOperationMetadata?: Schema$SetCommonInstanceMetadataOperationMetadata;
        /**
         * [Output Only] The time that this operation was started by the server.
         * This value is inRFC3339
         * text format.
         */
        startTime?: string | null;
        /**
         * [Output Only] The status of the operation, which can be one of the
         * following:
         * `PENDING`, `RUNNING`, or `DONE`.
         */
        status?: string | null;
        /**
         * [Output Only] An optional textual description of the current status of the
         * operation.
         */
        statusMessage?: string | null;
        /**
         * [Output Only] The unique target ID, which identifies a specific incarnation
         * of the target resource.
         */
        targetId?: string | null;
        /**
         * [Output Only] The URL of the resource that the operation modifies. For
         * operations related to creating a snapshot, this points to the disk
         * that the snapshot was created from.
         */
        targetLink?: string | null;
        /**
         * [Output Only] User who requested the operation, for example:
         * `user@example.com` or
         * `alice_smith_identifier (global/workforcePools/example-com-us-employees)`.
         */
        user?: string | null;
        /**
         * [Output Only] If warning messages are generated during processing of the
         * operation, this field will be populated.
         */
        warnings?: Array<{
            code?: string;
            data?: Array<{
                key?: string;
                value?: string;
            }>;
            message?: string;
        }> | null;
        /**
         * [Output Only] The URL of the zone where the operation resides. Only
         * applicable when performing per-zone operations.
         */
        zone?: string | null;
    }

    export interface Schema$InstanceTemplate {
        /**
         * Output only. [Output Only] The creation timestamp for this instance template inRFC3339
         * text format.
         */
        creationTimestamp?: string | null;
        /**
         * An optional description of this resource. Provide this property when you
         * create the resource.
         */
        description?: string | null;
        /**
         * Output only. [Output Only] A unique identifier for this instance template. The server
         * defines this identifier.
         */
        id?: string | null;
        /**
         * Output only. [Output Only] The resource type, which is alwayscompute#instanceTemplate for instance templates.
         */
        kind?: string | null;
        /**
         * Name of the resource; provided by the client when the resource is created.
         * The name must be 1-63 characters long, and comply withRFC1035.
         * Specifically, the name must be 1-63 characters long and match the regular
         * expression `[a-z]([-a-z0-9]*[a-z0-9])?` which means the first
         * character must be a lowercase letter, and all following characters must be
         * a dash, lowercase letter, or digit, except the last character, which cannot
         * be a dash.
         */
        name?: string | null;
        /**
         * The instance properties for this instance template.
         */
        properties?: Schema$InstanceProperties;
        /**
         * Output only. [Output Only] URL of the region where the instance template resides. Only
         * applicable for regional resources.
         */
        region?: string | null;
        /**
         * Output only. [Output Only] The URL for this instance template. The server defines this
         * URL.
         */
        selfLink?: string | null;
        /**
         * The source instance used to create the template. You can provide this as a
         * partial or full URL to the resource. For example, the following are valid
         * values:
         *
         *
         *      - https://www.googleapis.com/compute/v1/projects/project/zones/zone/instances/instance
         *    - projects/project/zones/zone/instances/instance
         */
        sourceInstance?: string | null;
        /**
         * The source instance params to use to create this instance template.
         */
        sourceInstanceParams?: Schema$SourceInstanceParams;
    }

    export interface Schema$MachineType {
        /**
         * [Output Only] A list of accelerator configurations assigned to this
         * machine type.
         */
        accelerators?: Array<{
            guestAcceleratorCount?: number;
            guestAcceleratorType?: string;
        }> | null;
        /**
         * [Output Only] The architecture of the machine type.
         */
        architecture?: string | null;
        /**
         * [Output Only] The configuration of bundled local SSD for the machine type.
         */
        bundledLocalSsds?: Schema$BundledLocalSsds;
        /**
         * [Output Only] Creation timestamp inRFC3339
         * text format.
         */
        creationTimestamp?: string | null;
        /**
         * [Output Only] The deprecation status associated with this machine type.
         * Only applicable if the machine type is unavailable.
         */
        deprecated?: Schema$DeprecationStatus;
        /**
         * [Output Only] An optional textual description of the resource.
         */
        description?: string | null;
        /**
         * [Output Only] The number of virtual CPUs that are available to the
         * instance.
         */
        guestCpus?: number | null;
        /**
         * [Output Only] The unique identifier for the resource. This identifier is
         * defined by the server.
         */
        id?: string | null;
        /**
         * [Deprecated] This property is deprecated and will never be populated with
         * any relevant values.
         */
        imageSpaceGb?: number | null;
        /**
         * [Output Only] Whether this machine type has a shared CPU. SeeShared-core machine
         * types for more information.
         */
        isSharedCpu?: boolean | null;
        /**
         * Output only. [Output Only] The type of the resource. Alwayscompute#machineType for machine types.
         */
        kind?: string | null;
        /**
         * [Output Only] Maximum persistent disks allowed.
         */
        maximumPersistentDisks?: number | null;
        /**
         * [Output Only] Maximum total persistent disks size (GB) allowed.
         */
        maximumPersistentDisksSizeGb?: string | null;
        /**
         * [Output Only] The amount of physical memory available to the instance,
         * defined in MB.
         */
        memoryMb?: number | null;
        /**
         * [Output Only] Name of the resource.
         */
        name?: string | null;
        /**
         * [Output Only] Server-defined URL for the resource.
         */
        selfLink?: string | null;
        /**
         * [Output Only] The name of the zone where the machine type resides,
         * such as us-central1-a.
         */
        zone?: string | null;
    }

    export interface Schema$InstanceGroupManagersCreateInstancesRequest {
        /**
         * [Required] List of specifications of per-instance configs.
         */
        instances?: Schema$PerInstanceConfig[];
    }

    export interface Schema$InstanceGroupManagersDeleteInstancesRequest {
        /**
         * The URLs of one or more instances to delete. This can be a full URL or
         * a partial URL, such as zones/[ZONE]/instances/[INSTANCE_NAME].
         * Queued instances do not have URL and can be deleted only by name.
         * One cannot specify both URLs and names in a single request.
         */
        instances?: string[] | null;
        /**
         * Specifies whether the request should proceed despite the inclusion of
         * instances that are not members of the group or that are already in the
         * process of being deleted or abandoned. If this field is set to `false` and
         * such an instance is specified in the request, the operation fails. The
         * operation always fails if the request contains a malformed instance URL or
         * a reference to an instance that exists in a zone or region other than the
         * group's zone or region.
         */
        skipInstancesOnValidationError?: boolean | null;
    }

    export interface Schema$RegionInstanceGroupManagersCreateInstancesRequest {
        /**
         * [Required] List of specifications of per-instance configs.
         */
        instances?: Schema$PerInstanceConfig[];
    }

    export interface Schema$RegionInstanceGroupManagersDeleteInstancesRequest {
        /**
         * The URLs of one or more instances to delete. This can be a full URL or
         * a partial URL, such as zones/[ZONE]/instances/[INSTANCE_NAME].
         */
        instances?: string[] | null;
        /**
         * Specifies whether the request should proceed despite the inclusion of
         * instances that are not members of the group or that are already in the
         * process of being deleted or abandoned. If this field is set to `false` and
         * such an instance is specified in the request, the operation fails. The
         * operation always fails if the request contains a malformed instance URL or
         * a reference to an instance that exists in a zone or region other than the
         * group's zone or region.
         */
        skipInstancesOnValidationError?: boolean | null;
    }

    export interface Schema$InstanceGroupManagerAllInstancesConfig {
        /**
         * Properties to set on all instances in the group.
         *
         * You can add or modify properties using theinstanceGroupManagers.patch orregionInstanceGroupManagers.patch. After settingallInstancesConfig on the group, you must update the group's
         * instances to apply the configuration. To apply the configuration, set the
         * group's updatePolicy.type field to use proactive updates or
         * use the applyUpdatesToInstances method.
         */
        properties?: Schema$InstancePropertiesPatch;
    }

    export interface Schema$InstanceGroupManagerAutoHealingPolicy {
        /**
         * The URL for the health check that signals autohealing.
         */
        healthCheck?: string | null;
        /**
         * The initial delay is the number of seconds that a new VM takes to
         * initialize and run its startup script. During a VM's initial delay
         * period, the MIG ignores unsuccessful health checks because the VM might
         * be in the startup process. This prevents the MIG from prematurely
         * recreating a VM. If the health check receives a healthy response during
         * the initial delay, it indicates that the startup process is complete and
         * the VM is ready. The value of initial delay must be between 0 and 3600
         * seconds. The default value is 0.
         */
        initialDelaySec?: number | null;
    }

    export interface Schema$InstanceGroupManagerActionsSummary {
        /**
         * Output only. The total number of instances in the managed instance group
         * that are scheduled to be abandoned. Abandoning an instance removes it
         * from the managed instance group without deleting it.
         */
        abandoning?: number | null;
        /**
         * Output only. The number of instances in the managed instance group that
         * are scheduled to be created or are currently being created. If the group
         * fails to create any of these instances, it tries again until it creates
         * the instance successfully.
         *
         * If you have disabled creation retries, this field will not be populated;
         * instead, the creatingWithoutRetries field will be populated.
         */
        creating?: number | null;
        /**
         * Output only. The number of instances that the managed instance group
         * will attempt to create. The group attempts to create each instance
         * only once. If the group fails to create any of these instances, it
         * decreases the group's targetSize value accordingly.
         */
        creatingWithoutRetries?: number | null;
        /**
         * Output only. The number of instances in the managed instance group that
         * are scheduled to be deleted or are currently being deleted.
         */
        deleting?: number | null;
        /**
         * Output only. The number of instances in the managed instance group that
         * are running and have no scheduled actions.
         */
        none?: number | null;
        /**
         * Output only. The number of instances in the managed instance group that
         * are scheduled to be recreated or are currently being being recreated.
         * Recreating an instance deletes the existing root persistent disk
         * and creates a new disk from the image that is defined in the
         * instance template.
         */
        recreating?: number | null;
        /**
         * Output only. The number of instances in the managed instance group that
         * are being reconfigured with properties that do not require a restart
         * or a recreate action. For example, setting or removing target
         * pools for the instance.
         */
        refreshing?: number | null;
        /**
         * Output only. The number of instances in the managed instance group that
         * are scheduled to be restarted or are currently being restarted.
         */
        restarting?: number | null;
        /**
         * Output only. The number of instances in the managed instance group that
         * are scheduled to be resumed or are currently being resumed.
         */
        resuming?: number | null;
        /**
         * Output only. The number of instances in the managed instance group that
         * are scheduled to be started or are currently being started.
         */
        starting?: number | null;
        /**
         * Output only. The number of instances in the managed instance group that
         * are scheduled to be stopped or are currently being stopped.
         */
        stopping?: number | null;
        /**
         * Output only. The number of instances in the managed instance group that
         * are scheduled to be suspended or are currently being suspended.
         */
        suspending?: number | null;
        /**
         * Output only. The number of instances in the managed instance group that
         * are being verified. See the managedInstances[].currentAction
         * property in the listManagedInstances method documentation.
         */
        verifying?: number | null;
    }

    export interface Schema$DistributionPolicy {
        /**
         * The distribution shape to which the group converges either proactively or
         * on resize events (depending on the value set inupdatePolicy.instanceRedistributionType).
         */
        targetShape?: string | null;
        /**
         * Zones where the regional managed instance group will create and manage
         * its instances.
         * By default, a regional MIG doesn't automatically select an AI zone to create
         * instances, even if an AI zone is available in the specified region. To
         * create instances in an AI zone in the selected region, you must explicitly
         * specify it in the distribution policy together with the other preferred
         * zones.
         */
        zones?: Schema$DistributionPolicyZoneConfiguration[];
    }

    export interface Schema$InstanceGroupManagerInstanceFlexibilityPolicy {
        /**
         * Named instance selections configuring properties that the group will use
         * when creating new VMs.
         */
        instanceSelections?: {
            [key: string]: Schema$InstanceGroupManagerInstanceFlexibilityPolicyInstanceSelection;
        } | null;
    }

    export interface Schema$InstanceGroupManagerInstanceLifecyclePolicy {
        /**
         * The action that a MIG performs on a failed VM. If the value of the
         * onFailedHealthCheck field is `DEFAULT_ACTION`, then the same action also
         * applies to the VMs on which your application fails a health check.
         * Valid values are
         *
         *    - REPAIR (default): MIG automatically repairs a failed VM
         *    by recreating it. For more information, see About
         *    repairing VMs in a MIG.
         *    - DO_NOTHING: MIG does not repair a failed VM.
         */
        defaultActionOnFailure?: string | null;
        /**
         * A bit indicating whether to forcefully apply the group's latest
         * configuration when repairing a VM. Valid options are:
         *
         *
         *
         *      -  NO (default): If configuration updates are available, they are not
         *      forcefully applied during repair. Instead, configuration updates are
         *      applied according to the group's update policy.
         *
         *      -  YES: If configuration updates are available, they are applied
         *      during repair.
         */
        forceUpdateOnRepair?: string | null;
        /**
         * The action that a MIG performs on an unhealthy VM. A VM is marked as
         * unhealthy when the application running on that VM fails a health check.
         * Valid values are:
         *
         *    - DEFAULT_ACTION (default): MIG uses the same action
         *    configured for instanceLifecyclePolicy.defaultActionOnFailure field.
         *    - REPAIR: MIG automatically repairs an unhealthy VM by
         *    recreating it.
         *    - DO_NOTHING: MIG doesn't repair an unhealthy VM.
         *    For more information, see
         *    About repairing VMs in a MIG.
         */
        onFailedHealthCheck?: string | null;
        /**
         * Configuration for VM repairs in the MIG.
         */
        onRepair?: Schema$InstanceGroupManagerInstanceLifecyclePolicyOnRepair;
    }

    export interface Schema$NamedPort {
        /**
         * The name for this named port.
         * The name must be 1-63 characters long, and comply withRFC1035.
         */
        name?: string | null;
        /**
         * The port number, which can be a value between 1 and 65535.
         */
        port?: number | null;
    }

    export interface Schema$InstanceGroupManagerResourcePolicies {
        /**
         * The URL of the workload policy that is specified for this managed
         * instance group.
         * It can be a full or partial URL. For example, the following are
         * all valid URLs to a workload policy:
         *
         *
         *       - https://www.googleapis.com/compute/v1/projects/project/regions/region/resourcePolicies/resourcePolicy
         *       - projects/project/regions/region/resourcePolicies/resourcePolicy
         *       - regions/region/resourcePolicies/resourcePolicy
         */
        workloadPolicy?: string | null;
    }

    export interface Schema$InstanceGroupManagerStandbyPolicy {
        /**
         * Specifies the number of seconds that the MIG should wait to suspend or
         * stop a VM after that VM was created. The initial delay gives the
         * initialization script the time to prepare your VM for a quick scale out.
         * The value of initial delay must be between 0 and 3600 seconds. The
         * default value is 0.
         */
        initialDelaySec?: number | null;
        /**
         * Defines how a MIG resumes or starts VMs from a standby pool when the
         * group scales out. The default mode is `MANUAL`.
         */
        mode?: string | null;
    }

    export interface Schema$StatefulPolicy {
        preservedState?: Schema$StatefulPolicyPreservedState;
    }

    export interface Schema$InstanceGroupManagerStatus {
        /**
         * Output only. Status of all-instances configuration on the group.
         */
        allInstancesConfig?: Schema$InstanceGroupManagerStatusAllInstancesConfig;
        /**
         * Output only. The accelerator topology applied to this MIG.
         * Currently only one accelerator topology is supported.
         */
        appliedAcceleratorTopologies?: Schema$InstanceGroupManagerStatusAcceleratorTopology[];
        /**
         * Output only. The URL of theAutoscaler
         * that targets this instance group manager.
         */
        autoscaler?: string | null;
        /**
         * Output only. The status of bulk instance operation.
         */
        bulkInstanceOperation?: Schema$InstanceGroupManagerStatusBulkInstanceOperation;
        /**
         * Output only. The list of instance statuses and the number of instances
         * in this managed instance group that have the status. Currently only shown
         * for TPU MIGs
         */
        currentInstanceStatuses?: Schema$InstanceGroupManagerStatusInstanceStatusSummary;
        /**
         * Output only. A bit indicating whether the managed instance group is in a
         * stable state. A stable state means that: none of the instances in the
         * managed instance group is currently undergoing any type of change (for
         * example, creation, restart, or deletion); no future changes are scheduled
         * for instances in the managed instance group; and the managed instance
         * group itself is not being modified.
         */
        isStable?: boolean | null;
        /**
         * Output only. Stateful status of the given Instance Group Manager.
         */
        stateful?: Schema$InstanceGroupManagerStatusStateful;
        /**
         * Output only. A status of consistency of Instances' versions with their
         * target version specified by version field on Instance Group
         * Manager.
         */
        versionTarget?: Schema$InstanceGroupManagerStatusVersionTarget;
    }

    export interface Schema$InstanceGroupManagerTargetSizePolicy {
        /**
         * The mode of target size policy based on which the MIG creates its VMs
         * individually or all at once.
         */
        mode?: string | null;
    }

    export interface Schema$InstanceGroupManagerUpdatePolicy {
        /**
         * The
         * instance redistribution policy for regional managed instance groups.
         * Valid values are:
         *
         *    - PROACTIVE (default): The group attempts to maintain an
         *    even distribution of VM instances across zones in the region.
         *    - NONE: For non-autoscaled groups, proactive
         *    redistribution is disabled.
         */
        instanceRedistributionType?: string | null;
        /**
         * The maximum number of instances that can be created above the specifiedtargetSize during the update process. This value can be
         * either a fixed number or, if the group has 10 or more instances, a
         * percentage. If you set a percentage, the number of instances is rounded
         * if necessary.  The default value for maxSurge is a fixed
         * value equal to the number of zones in which the managed instance group
         * operates.
         *
         * At least one of either maxSurge ormaxUnavailable must be greater than 0. Learn more about maxSurge.
         */
        maxSurge?: Schema$FixedOrPercent;
        /**
         * The maximum number of instances that can be unavailable during the update
         * process. An instance is considered available if all of the following
         * conditions are satisfied:
         *
         *
         *
         *      - The instance's status is
         *      RUNNING.
         *    - If there is a health
         *      check on the instance group, the instance's health check status
         *      must be HEALTHY at least once. If there is no health check
         *      on the group, then the instance only needs to have a status of
         *      RUNNING to be considered available.
         *
         *
         * This value can be either a fixed number or, if the group has 10 or more
         * instances, a percentage. If you set a percentage, the number of instances
         * is rounded if necessary. The default value formaxUnavailable is a fixed value equal to the number of zones
         * in which the managed instance group operates.
         *
         * At least one of either maxSurge ormaxUnavailable must be greater than 0. Learn more about maxUnavailable.
         */
        maxUnavailable?: Schema$FixedOrPercent;
        /**
         * Minimal action to be taken on an instance. Use this option to minimize
         * disruption as much as possible or to apply a more disruptive action than
         * is necessary.
         *
         *    - To limit disruption as much as possible, set the minimal action toREFRESH. If your update requires a more disruptive action,
         *    Compute Engine performs the necessary action to execute the update.
         *    - To apply a more disruptive action than is strictly necessary, set the
         *    minimal action to RESTART or REPLACE. For
         *    example, Compute Engine does not need to restart a VM to change its
         *    metadata. But if your application reads instance metadata only when a VM
         *    is restarted, you can set the minimal action to RESTART in
         *    order to pick up metadata changes.
         */
        minimalAction?: string | null;
        /**
         * Most disruptive action that is allowed to be taken on an instance.
         * You can specify either NONE to forbid any actions,REFRESH to avoid restarting the VM and to limit disruption
         * as much as possible. RESTART to allow actions that can be
         * applied without instance replacing or REPLACE to allow all
         * possible actions. If the Updater determines that the minimal update
         * action needed is more disruptive than most disruptive allowed action you
         * specify it will not perform the update at all.
         */
        mostDisruptiveAllowedAction?: string | null;
        /**
         * What action should be used to replace instances.
         * See minimal_action.REPLACE
         */
        replacementMethod?: string | null;
        /**
         * The type
         * of update process. You can specify either PROACTIVE so
         * that the MIG automatically updates VMs to the latest configurations orOPPORTUNISTIC so that you can select the VMs that you want
         * to update.
         */
        type?: string | null;
    }

    export interface Schema$InstanceGroupManagerVersion {
        /**
         * The URL of the instance template that is specified for this managed
         * instance group. The group uses this template to create new instances in
         * the managed instance group until the `targetSize` for this version is
         * reached. The templates for existing instances in the group do not change
         * unless you run recreateInstances, runapplyUpdatesToInstances, or set the group'supdatePolicy.type to PROACTIVE; in those cases,
         * existing instances are updated until the `targetSize` for this version is
         * reached.
         */
        instanceTemplate?: string | null;
        /**
         * Name of the version. Unique among all versions in the scope of this
         * managed instance group.
         */
        name?: string | null;
        /**
         * Specifies the intended number of instances to be created from theinstanceTemplate. The final number of instances created
         * from the template will be equal to:
         *
         *
         *      - If expressed as a fixed number, the minimum of either
         *       targetSize.fixed or
         *       instanceGroupManager.targetSize is used.
         *      - if expressed as a percent, the targetSize
         *      would be (targetSize.percent/100 *
         *      InstanceGroupManager.targetSize) If there is a remainder, the
         *      number is rounded.
         *
         *  If unset, this version will update any remaining instances not
         * updated by another version. ReadStarting
         * a canary update for more information.
         */
        targetSize?: Schema$FixedOrPercent;
    }

    export interface Schema$InstanceGroupManagersScopedList {
        /**
         * Output only. The list of managed instance groups that are contained in the specified
         * project and zone.
         */
        instanceGroupManagers?: Schema$InstanceGroupManager[];
        /**
         * Output only. The warning that replaces the list of managed instance groups when the list
         * is empty.
         */
        warning?: {
            code?: string;
            data?: Array<{
                key?: string;
                value?: string;
            }>;
            message?: string;
        } | null;
    }

    export interface Schema$ManagedInstanceInstanceHealth {
        /**
         * Output only. [Output Only] The current detailed instance health state.
         */
        detailedHealthState?: string | null;
        /**
         * Output only. [Output Only] The URL for the health check that verifies whether the
         * instance is healthy.
         */
        healthCheck?: string | null;
    }

    export interface Schema$ManagedInstanceLastAttempt {
        /**
         * Output only. [Output Only] Encountered errors during the last attempt to create or
         * delete the instance.
         */
        errors?: {
            errors?: Array<{
                code?: string;
                errorDetails?: Array<{
                    errorInfo?: Schema$ErrorInfo;
                    help?: Schema$Help;
                    localizedMessage?: Schema$LocalizedMessage;
                    quotaInfo?: Schema$QuotaExceededInfo;
                }>;
                location?: string;
                message?: string;
            }>;
        } | null;
    }

    export interface Schema$PreservedState {
        /**
         * Preserved disks defined for this instance.
         * This map is keyed with the device names of the disks.
         */
        disks?: {
            [key: string]: Schema$PreservedStatePreservedDisk;
        } | null;
        /**
         * Preserved external IPs defined for this instance.
         * This map is keyed with the name of the network interface.
         */
        externalIPs?: {
            [key: string]: Schema$PreservedStatePreservedNetworkIp;
        } | null;
        /**
         * Preserved internal IPs defined for this instance.
         * This map is keyed with the name of the network interface.
         */
        internalIPs?: {
            [key: string]: Schema$PreservedStatePreservedNetworkIp;
        } | null;
        /**
         * Preserved metadata defined for this instance.
         */
        metadata?: {
            [key: string]: string;
        } | null;
    }

    export interface Schema$ManagedInstancePropertiesFromFlexibilityPolicy {
        /**
         * Output only. The machine type to be used for this instance.
         */
        machineType?: string | null;
    }

    export interface Schema$ManagedInstanceScheduling {
        /**
         * Output only. The timestamp at which the underlying instance will be
         * triggered for graceful shutdown if it is configured. This is in RFC3339 text format.
         */
        gracefulShutdownTimestamp?: string | null;
        /**
         * Output only. The timestamp at which the managed instance will be terminated. This is
         * in RFC3339 text
         * format.
         */
        terminationTimestamp?: string | null;
    }

    export interface Schema$ManagedInstanceShutdownDetails {
        /**
         * Output only. The duration for graceful shutdown. Only applicable when the instance is
         * in `PENDING_STOP` state.
         */
        maxDuration?: Schema$Duration;
        /**
         * Output only. Past timestamp indicating the beginning of `PENDING_STOP` state of
         * instance in RFC3339
         * text format.
         */
        requestTimestamp?: string | null;
    }

    export interface Schema$ManagedInstanceVersion {
        /**
         * Output only. [Output Only] The intended template of the instance. This field is empty
         * when current_action is one of { DELETING, ABANDONING \}.
         */
        instanceTemplate?: string | null;
        /**
         * Output only. [Output Only] Name of the version.
         */
        name?: string | null;
    }

    export interface Schema$ErrorInfo {
        /**
         * The logical grouping to which the "reason" belongs. The error domain
         * is typically the registered service name of the tool or product that
         * generates the error. Example: "pubsub.googleapis.com". If the error is
         * generated by some common infrastructure, the error domain must be a
         * globally unique value that identifies the infrastructure. For Google API
         * infrastructure, the error domain is "googleapis.com".
         */
        domain?: string | null;
        /**
         * Additional structured details about this error.
         *
         * Keys must match a regular expression of `a-z+` but should
         * ideally be lowerCamelCase. Also, they must be limited to 64 characters in
         * length. When identifying the current value of an exceeded limit, the units
         * should be contained in the key, not the value.  For example, rather than
         * `{"instanceLimit": "100/request"\}`, should be returned as,
         * `{"instanceLimitPerRequest": "100"\}`, if the client exceeds the number of
         * instances that can be created in a single (batch) request.
         */
        metadatas?: {
            [key: string]: string;
        } | null;
        /**
         * The reason of the error. This is a constant value that identifies the
         * proximate cause of the error. Error reasons are unique within a particular
         * domain of errors. This should be at most 63 characters and match a
         * regular expression of `A-Z+[A-Z0-9]`, which represents
         * UPPER_SNAKE_CASE.
         */
        reason?: string | null;
    }

    export interface Schema$Help {
        /**
         * URL(s) pointing to additional information on handling the current error.
         */
        links?: Schema$HelpLink[];
    }

    export interface Schema$LocalizedMessage {
        /**
         * The locale used following the specification defined at
         * https://www.rfc-editor.org/rfc/bcp/bcp47.txt.
         * Examples are: "en-US", "fr-CH", "es-MX"
         */
        locale?: string | null;
        /**
         * The localized error message in the above locale.
         */
        message?: string | null;
    }

    export interface Schema$QuotaExceededInfo {
        /**
         * The map holding related quota dimensions.
         */
        dimensions?: {
            [key: string]: string;
        } | null;
        /**
         * Future quota limit being rolled out. The limit's unit depends on the quota
         *  type or metric.
         */
        futureLimit?: number | null;
        /**
         * Current effective quota limit. The limit's unit depends on the quota type
         * or metric.
         */
        limit?: number | null;
        /**
         * The name of the quota limit.
         */
        limitName?: string | null;
        /**
         * The Compute Engine quota metric name.
         */
        metricName?: string | null;
        /**
         * Rollout status of the future quota limit.
         */
        rolloutStatus?: string | null;
    }

    export interface Schema$GetHealthOperationMetadata {
        /**
         * Output only. The health information.
         */
        healthInfo?: Schema$GetHealthOperationMetadataHealthInfo;
    }

    export interface Schema$GetVersionOperationMetadata {
        inlineSbomInfo?: Schema$GetVersionOperationMetadataSbomInfo;
    }

    export interface Schema$InstancesBulkInsertOperationMetadata {
        /**
         * Status information per location (location name is key).
         * Example key: zones/us-central1-a
         */
        perLocationStatus?: {
            [key: string]: Schema$BulkInsertOperationStatus;
        } | null;
    }

    export interface Schema$SetCommonInstanceMetadataOperationMetadata {
        /**
         * [Output Only] The client operation id.
         */
        clientOperationId?: string | null;
        /**
         * [Output Only] Status information per location (location name is key).
         * Example key: zones/us-central1-a
         */
        perLocationOperations?: {
            [key: string]: Schema$SetCommonInstanceMetadataOperationMetadataPerLocationOperationInfo;
        } | null;
    }

    export interface Schema$InstanceProperties {
        /**
         * Controls for advanced machine-related behavior features.
         * Note that for MachineImage, this is not supported yet.
         */
        advancedMachineFeatures?: Schema$AdvancedMachineFeatures;
        /**
         * Enables instances created based on these properties to send packets with
         * source IP addresses other than their own and receive packets with
         * destination IP addresses other than their own. If these instances will be
         * used as an IP gateway or it will be set as the next-hop in a Route
         * resource, specify true. If unsure, leave this set tofalse. See theEnable IP forwarding
         * documentation for more information.
         */
        canIpForward?: boolean | null;
        /**
         * Specifies the Confidential Instance options.
         * Note that for MachineImage, this is not supported yet.
         */
        confidentialInstanceConfig?: Schema$ConfidentialInstanceConfig;
        /**
         * An optional text description for the instances that are created from these
         * properties.
         */
        description?: string | null;
        /**
         * An array of disks that are associated with the instances that are created
         * from these properties.
         */
        disks?: Schema$AttachedDisk[];
        /**
         * A list of guest accelerator cards' type and count to use for instances
         * created from these properties.
         */
        guestAccelerators?: Schema$AcceleratorConfig[];
        /**
         * KeyRevocationActionType of the instance. Supported options are "STOP" and
         * "NONE". The default value is "NONE" if it is not specified.
         */
        keyRevocationActionType?: string | null;
        /**
         * Labels to apply to instances that are created from these properties.
         */
        labels?: {
            [key: string]: string;
        } | null;
        /**
         * Specifies which method should be used for encrypting the
         * Local SSDs attached to the VM.
         */
        localSsdEncryptionMode?: string | null;
        /**
         * The machine type to use for instances that are created from these
         * properties.
         * This field only accepts a machine type name, for example `n2-standard-4`.
         * If you use the machine type full or partial URL, for example
         * `projects/my-l7ilb-project/zones/us-central1-a/machineTypes/n2-standard-4`,
         * the request will result in an `INTERNAL_ERROR`.
         */
        machineType?: string | null;
        /**
         * The metadata key/value pairs to assign to instances that are created from
         * these properties. These pairs can consist of custom metadata or predefined
         * keys. SeeProject and
         * instance metadata for more information.
         */
        metadata?: Schema$Metadata;
        /**
         * Minimum cpu/platform to be used by instances. The instance may be
         * scheduled on the specified or newer cpu/platform. Applicable values are the
         * friendly names of CPU platforms, such asminCpuPlatform: "Intel Haswell" orminCpuPlatform: "Intel Sandy Bridge". For more
         * information, read Specifying a
         * Minimum CPU Platform.
         */
        minCpuPlatform?: string | null;
        /**
         * An array of network access configurations for this interface.
         */
        networkInterfaces?: Schema$NetworkInterface[];
        /**
         * Note that for MachineImage, this is not supported yet.
         */
        networkPerformanceConfig?: Schema$NetworkPerformanceConfig;
        /**
         * The private IPv6 google access type for VMs.
         * If not specified, use  INHERIT_FROM_SUBNETWORK as default.
         * Note that for MachineImage, this is not supported yet.
         */
        privateIpv6GoogleAccess?: string | null;
        /**
         * Specifies the reservations that instances can consume from.
         * Note that for MachineImage, this is not supported yet.
         */
        reservationAffinity?: Schema$ReservationAffinity;
        /**
         * Input only. Resource manager tags to be bound to the instance. Tag keys and values
         * have the same definition as resource
         * manager tags. Keys and values can be either in numeric format,
         * such as `tagKeys/{tag_key_id\}` and `tagValues/{tag_value_id\}` or in
         * namespaced format such as `{org_id|project_id\}/{tag_key_short_name\}` and
         * `{tag_value_short_name\}`. The field is ignored (both PUT &
         * PATCH) when empty.
         */
        resourceManagerTags?: {
            [key: string]: string;
        } | null;
        /**
         * Resource policies (names, not URLs) applied to instances created from
         * these properties.
         * Note that for MachineImage, this is not supported yet.
         */
        resourcePolicies?: string[] | null;
        /**
         * Specifies the scheduling options for the instances that are created from
         * these properties.
         */
        scheduling?: Schema$Scheduling;
        /**
         * A list of service accounts with specified scopes. Access tokens for these
         * service accounts are available to the instances that are created from
         * these properties. Use metadata queries to obtain the access tokens for
         * these instances.
         */
        serviceAccounts?: Schema$ServiceAccount[];
        /**
         * Note that for MachineImage, this is not supported yet.
         */
        shieldedInstanceConfig?: Schema$ShieldedInstanceConfig;
        /**
         * A list of tags to apply to the instances that are created from these
         * properties. The tags identify valid sources or targets for network
         * firewalls. The setTags method can modify this list of tags. Each tag within
         * the list must comply with RFC1035.
         */
        tags?: Schema$Tags;
        workloadIdentityConfig?: Schema$WorkloadIdentityConfig;
    }

    export interface Schema$SourceInstanceParams {
        /**
         * Attached disks configuration. If not provided, defaults are applied:
         * For boot disk and any other R/W disks, the source images for each disk
         * will be used. For read-only disks, they will be attached in read-only
         * mode. Local SSD disks will be created as blank volumes.
         */
        diskConfigs?: Schema$DiskInstantiationConfig[];
    }

    export interface Schema$BundledLocalSsds {
        /**
         * The default disk interface if the interface is not specified.
         */
        defaultInterface?: string | null;
        /**
         * The number of partitions.
         */
        partitionCount?: number | null;
    }

    export interface Schema$DeprecationStatus {
        /**
         * An optional RFC3339 timestamp on or after which the state of this
         * resource is intended to change to DELETED. This is only
         * informational and the status will not change unless the client explicitly
         * changes it.
         */
        deleted?: string | null;
        /**
         * An optional RFC3339 timestamp on or after which the state of this
         * resource is intended to change to DEPRECATED. This is only
         * informational and the status will not change unless the client explicitly
         * changes it.
         */
        deprecated?: string | null;
        /**
         * An optional RFC3339 timestamp on or after which the state of this
         * resource is intended to change to OBSOLETE. This is only
         * informational and the status will not change unless the client explicitly
         * changes it.
         */
        obsolete?: string | null;
        /**
         * The URL of the suggested replacement for a deprecated resource.
         * The suggested replacement resource must be the same kind of resource as the
         * deprecated resource.
         */
        replacement?: string | null;
        /**
         * The deprecation state of this resource. This can be ACTIVE,DEPRECATED, OBSOLETE, or DELETED.
         * Operations which communicate the end of life date for an image, can useACTIVE. Operations which create a new resource using aDEPRECATED resource will return successfully, but with a
         * warning indicating the deprecated resource and recommending its
         * replacement. Operations which use OBSOLETE orDELETED resources will be rejected and result in an error.
         */
        state?: string | null;
    }

    export interface Schema$PerInstanceConfig {
        /**
         * Fingerprint of this per-instance config. This field can be used in
         * optimistic locking. It is ignored when inserting a per-instance
         * config. An up-to-date fingerprint must be provided in order to update an
         * existing per-instance configuration or the field needs to be unset.
         */
        fingerprint?: string | null;
        /**
         * The name of a per-instance configuration and its corresponding instance.
         * Serves as a merge key during UpdatePerInstanceConfigs
         * operations, that is, if a per-instance configuration with the same name
         * exists then it will be updated, otherwise a new one will be created for the
         * VM instance with the same name. An attempt to create a per-instance
         * configuration for a VM instance that either doesn't exist or is not part
         * of the group will result in an error.
         */
        name?: string | null;
        /**
         * The intended preserved state for the given instance. Does not contain
         * preserved state generated from a stateful policy.
         */
        preservedState?: Schema$PreservedState;
        /**
         * The status of applying this per-instance configuration on the corresponding
         * managed instance.
         */
        status?: string | null;
    }

    export interface Schema$InstancePropertiesPatch {
        /**
         * The label key-value pairs that you want to patch onto the instance.
         */
        labels?: {
            [key: string]: string;
        } | null;
        /**
         * The metadata key-value pairs that you want to patch onto the instance. For
         * more information, see Project and
         * instance metadata.
         */
        metadata?: {
            [key: string]: string;
        } | null;
    }

    export interface Schema$DistributionPolicyZoneConfiguration {
        /**
         * The URL of thezone.
         * The zone must exist in the region where the managed instance group is
         * located.
         */
        zone?: string | null;
    }

    export interface Schema$InstanceGroupManagerInstanceFlexibilityPolicyInstanceSelection {
        /**
         * Full machine-type names, e.g. "n1-standard-16".
         */
        machineTypes?: string[] | null;
        /**
         * Preference of this instance selection. Lower number means higher
         * preference. MIG will first try to create a VM based on the machine-type
         * with lowest rank and fallback to next rank based on availability.
         * Machine types and instance selections with the same rank have the same
         * preference.
         */
        rank?: number | null;
    }

    export interface Schema$InstanceGroupManagerInstanceLifecyclePolicyOnRepair {
        /**
         * Specifies whether the MIG can change a VM's zone during a repair.
         * Valid values are:
         *
         *    - NO (default): MIG cannot change a VM's zone during a
         *    repair.
         *    - YES: MIG can select a different zone for the VM during
         *    a repair.
         */
        allowChangingZone?: string | null;
    }

    export interface Schema$StatefulPolicyPreservedState {
        /**
         * Disks created on the instances that will be preserved on instance
         * delete, update, etc. This map is keyed with the device names of
         * the disks.
         */
        disks?: {
            [key: string]: Schema$StatefulPolicyPreservedStateDiskDevice;
        } | null;
        /**
         * External network IPs assigned to the instances that will be preserved on
         * instance delete, update, etc. This map is keyed with the network
         * interface name.
         */
        externalIPs?: {
            [key: string]: Schema$StatefulPolicyPreservedStateNetworkIp;
        } | null;
        /**
         * Internal network IPs assigned to the instances that will be preserved on
         * instance delete, update, etc. This map is keyed with the network
         * interface name.
         */
        internalIPs?: {
            [key: string]: Schema$StatefulPolicyPreservedStateNetworkIp;
        } | null;
    }

    export interface Schema$InstanceGroupManagerStatusAllInstancesConfig {
        /**
         * Output only. Current all-instances configuration revision.
         * This value is in RFC3339 text format.
         */
        currentRevision?: string | null;
        /**
         * Output only. A bit indicating whether this configuration has
         * been applied to all managed instances in the group.
         */
        effective?: boolean | null;
    }

    export interface Schema$InstanceGroupManagerStatusAcceleratorTopology {
        /**
         * Output only. Topology in the format of: "16x16", "4x4x4", etc.
         * The value is the same as configured in the WorkloadPolicy.
         */
        acceleratorTopology?: string | null;
        /**
         * Output only. The state of the accelerator topology.
         */
        state?: string | null;
        /**
         * Output only. The result of the latest accelerator topology state
         * check.
         */
        stateDetails?: Schema$InstanceGroupManagerStatusAcceleratorTopologyAcceleratorTopologyStateDetails;
    }

    export interface Schema$InstanceGroupManagerStatusBulkInstanceOperation {
        /**
         * Output only. Informs whether bulk instance operation is in progress.
         */
        inProgress?: boolean | null;
        /**
         * Output only. Information from the last progress check of bulk instance
         * operation.
         */
        lastProgressCheck?: Schema$InstanceGroupManagerStatusBulkInstanceOperationLastProgressCheck;
    }

    export interface Schema$InstanceGroupManagerStatusInstanceStatusSummary {
        /**
         * Output only. The number of instances in the managed instance group
         * that have DEPROVISIONING status.
         */
        deprovisioning?: number | null;
        /**
         * Output only. The number of instances that have not been created yet or
         * have been deleted. Includes only instances that would be shown in the
         * listManagedInstances method and not all instances that have been
         * deleted in the lifetime of the MIG.
         * Does not include FlexStart instances that are waiting for the resources
         * availability, they are considered as 'pending'.
         */
        nonExistent?: number | null;
        /**
         * Output only. The number of instances in the managed instance group
         * that have PENDING status, that is FlexStart instances that are waiting
         * for resources. Instances that do not exist because of the other reasons
         * are counted as 'non_existent'.
         */
        pending?: number | null;
        /**
         * Output only. The number of instances in the managed instance group
         * that have PENDING_STOP status.
         */
        pendingStop?: number | null;
        /**
         * Output only. The number of instances in the managed instance group
         * that have PROVISIONING status.
         */
        provisioning?: number | null;
        /**
         * Output only. The number of instances in the managed instance group
         * that have REPAIRING status.
         */
        repairing?: number | null;
        /**
         * Output only. The number of instances in the managed instance group
         * that have RUNNING status.
         */
        running?: number | null;
        /**
         * Output only. The number of instances in the managed instance group
         * that have STAGING status.
         */
        staging?: number | null;
        /**
         * Output only. The number of instances in the managed instance group
         * that have STOPPED status.
         */
        stopped?: number | null;
        /**
         * Output only. The number of instances in the managed instance group
         * that have STOPPING status.
         */
        stopping?: number | null;
        /**
         * Output only. The number of instances in the managed instance group
         * that have SUSPENDED status.
         */
        suspended?: number | null;
        /**
         * Output only. The number of instances in the managed instance group
         * that have SUSPENDING status.
         */
        suspending?: number | null;
        /**
         * Output only. The number of instances in the managed instance group
         * that have TERMINATED status.
         */
        terminated?: number | null;
    }

    export interface Schema$InstanceGroupManagerStatusStateful {
        /**
         * Output only. A bit indicating whether the managed instance group
         * has stateful configuration, that is, if you have configured any items
         * in a stateful policy or in per-instance configs.
         * The group might report that it has no stateful configuration even when
         * there is still some preserved state on a managed instance, for example,
         * if you have deleted all PICs but not yet applied those deletions.
         */
        hasStatefulConfig?: boolean | null;
        /**
         * Output only. Status of per-instance configurations on the instances.
         */
        perInstanceConfigs?: Schema$InstanceGroupManagerStatusStatefulPerInstanceConfigs;
    }

    export interface Schema$InstanceGroupManagerStatusVersionTarget {
        /**
         * Output only. A bit indicating whether version target has been reached
         * in this managed instance group, i.e. all instances are in their target
         * version. Instances' target version are specified byversion field on Instance Group Manager.
         */
        isReached?: boolean | null;
    }

    export interface Schema$FixedOrPercent {
        /**
         * Output only. Absolute value of VM instances calculated based on the specific mode.
         *
         *
         *
         *     - If the value is fixed, then the calculated
         *      value is equal to the fixed value.
         *     - If the value is a percent, then the
         *     calculated
         *      value is percent/100 * targetSize. For example,
         *      the calculated value of a 80% of a managed instance group
         *      with 150 instances would be (80/100 * 150) = 120 VM instances. If there
         *      is a remainder, the number is rounded.
         */
        calculated?: number | null;
        /**
         * Specifies a fixed number of VM instances. This must be a positive integer.
         */
        fixed?: number | null;
        /**
         * Specifies a percentage of instances between 0 to 100%, inclusive. For
         * example, specify 80 for 80%.
         */
        percent?: number | null;
    }

    export interface Schema$PreservedStatePreservedDisk {
        /**
         * These stateful disks will never be deleted during autohealing,
         * update, instance recreate operations. This flag is used to configure
         * if the disk should be deleted after it is no longer used by the group,
         * e.g. when the given instance or the whole MIG is deleted.
         * Note: disks attached in READ_ONLY mode cannot be
         * auto-deleted.
         */
        autoDelete?: string | null;
        /**
         * The mode in which to attach this disk, either READ_WRITE orREAD_ONLY. If not specified, the default is to attach the
         * disk in READ_WRITE mode.
         */
        mode?: string | null;
        /**
         * The URL of the disk resource that is stateful and should be attached
         * to the VM instance.
         */
        source?: string | null;
    }

    export interface Schema$PreservedStatePreservedNetworkIp {
        /**
         * These stateful IPs will never be released during autohealing,
         * update or VM instance recreate operations.
         * This flag is used to configure if the IP reservation should be deleted
         * after it is no longer used by the group, e.g. when the given instance
         * or the whole group is deleted.
         */
        autoDelete?: string | null;
        /**
         * Ip address representation
         */
        ipAddress?: Schema$PreservedStatePreservedNetworkIpIpAddress;
    }

    export interface Schema$Duration {
        /**
         * Span of time that's a fraction of a second at nanosecond resolution.
         * Durations less than one second are represented with a 0
         * `seconds` field and a positive `nanos` field. Must be from 0
         * to 999,999,999 inclusive.
         */
        nanos?: number | null;
        /**
         * Span of time at a resolution of a second. Must be from 0
         * to 315,576,000,000 inclusive. Note: these bounds are computed from:
         * 60 sec/min * 60 min/hr * 24 hr/day * 365.25 days/year * 10000 years
         */
        seconds?: string | null;
    }

    export interface Schema$HelpLink {
        /**
         * Describes what the link offers.
         */
        description?: string | null;
        /**
         * The URL of the link.
         */
        url?: string | null;
    }

    export interface Schema$GetHealthOperationMetadataHealthInfo {
        /**
         * Output only. The availability SLO status.
         */
        availabilitySloStatus?: string | null;
        /**
         * Output only. The health status.
         */
        healthStatus?: string | null;
        /**
         * Output only. The repair category.
         */
        repairCategory?: string | null;
        /**
         * Output only. The reason for unhealthy status.
         */
        unhealthyReason?: string | null;
        /**
         * Output only. The time when health info was updated.
         */
        updateTime?: string | null;
    }

    export interface Schema$GetVersionOperationMetadataSbomInfo {
        /**
         * A mapping of components to their currently-applied versions or other
         * appropriate identifiers.
         */
        currentComponentVersions?: {
            [key: string]: string;
        } | null;
        /**
         * A mapping of components to their target versions or other appropriate
         * identifiers.
         */
        targetComponentVersions?: {
            [key: string]: string;
        } | null;
    }

    export interface Schema$BulkInsertOperationStatus {
        /**
         * [Output Only] Count of VMs successfully created so far.
         */
        createdVmCount?: number | null;
        /**
         * [Output Only] Count of VMs that got deleted during rollback.
         */
        deletedVmCount?: number | null;
        /**
         * [Output Only] Count of VMs that started creating but encountered an
         * error.
         */
        failedToCreateVmCount?: number | null;
        /**
         * [Output Only] Creation status of BulkInsert operation - information
         * if the flow is rolling forward or rolling back.
         */
        status?: string | null;
        /**
         * [Output Only] Count of VMs originally planned to be created.
         */
        targetVmCount?: number | null;
    }

    export interface Schema$SetCommonInstanceMetadataOperationMetadataPerLocationOperationInfo {
        /**
         * [Output Only] If state is `ABANDONED` or `FAILED`, this field is
         * populated.
         */
        error?: Schema$Status;
        /**
         * [Output Only] Status of the action, which can be one of the following:
         * `PROPAGATING`, `PROPAGATED`, `ABANDONED`, `FAILED`, or `DONE`.
         */
        state?: string | null;
    }

    export interface Schema$AdvancedMachineFeatures {
        /**
         * Whether to enable nested virtualization or not (default is false).
         */
        enableNestedVirtualization?: boolean | null;
        /**
         * Whether to enable UEFI networking for instance creation.
         */
        enableUefiNetworking?: boolean | null;
        /**
         * Type of Performance Monitoring Unit requested on instance.
         */
        performanceMonitoringUnit?: string | null;
        /**
         * The number of threads per physical core. To disable simultaneous
         * multithreading (SMT) set this to 1. If unset, the maximum number
         * of threads supported per core by the underlying processor is
         * assumed.
         */
        threadsPerCore?: number | null;
        /**
         * Turbo frequency mode to use for the instance.
         * Supported modes include:
         * * ALL_CORE_MAX
         *
         * Using empty string or not setting this field will use the platform-specific
         * default turbo mode.
         */
        turboMode?: string | null;
        /**
         * The number of physical cores to expose to an instance. Multiply by
         * the number of threads per core to compute the total number of virtual
         * CPUs to expose to the instance. If unset, the number of cores is
         * inferred from the instance's nominal CPU count and the underlying
         * platform's SMT width.
         */
        visibleCoreCount?: number | null;
    }

    export interface Schema$ConfidentialInstanceConfig {
        /**
         * Defines the type of technology used by the confidential instance.
         */
        confidentialInstanceType?: string | null;
        /**
         * Defines whether the instance should have confidential compute enabled.
         */
        enableConfidentialCompute?: boolean | null;
    }

    export interface Schema$AttachedDisk {
        /**
         * Output only. [Output Only] The architecture of the attached disk. Valid values are ARM64
         * or X86_64.
         */
        architecture?: string | null;
        /**
         * Specifies whether the disk will be auto-deleted when the instance is
         * deleted (but not when the disk is detached from the instance).
         */
        autoDelete?: boolean | null;
        /**
         * Indicates that this is a boot disk. The virtual machine will use the first
         * partition of the disk for its root filesystem.
         */
        boot?: boolean | null;
        /**
         * Specifies a unique device name of your choice that is reflected into the/dev/disk/by-id/google-* tree of a Linux operating system
         * running within the instance. This name can be used to reference the device
         * for mounting, resizing, and so on, from within the instance.
         *
         * If not specified, the server chooses a default device name to apply to this
         * disk, in the form persistent-disk-x, where x is a number
         * assigned by Google Compute Engine. This field is only applicable for
         * persistent disks.
         */
        deviceName?: string | null;
        /**
         * Encrypts or decrypts a disk using acustomer-supplied
         * encryption key.
         *
         * If you are creating a new disk, this field encrypts the new disk using
         * an encryption key that you provide. If you are attaching an existing
         * disk that is already encrypted, this field decrypts the disk using
         * the customer-supplied encryption key.
         *
         * If you encrypt a disk using a customer-supplied key, you must provide the
         * same key again when you attempt to use this resource at a later time. For
         * example, you must provide the key when you create a snapshot or an image
         * from the disk or when you attach the disk to a virtual machine instance.
         *
         * If you do not provide an encryption key, then the disk will be encrypted
         * using an automatically generated key and you do not need to provide a key
         * to use the disk later.
         *
         * Note:
         *
         * Instance templates do not storecustomer-supplied
         * encryption keys, so you cannot use your own keys to encrypt disks in amanaged instance group.
         *
         * You cannot create VMs that have disks with customer-supplied keys using
         * the bulk
         * insert method.
         */
        diskEncryptionKey?: Schema$CustomerEncryptionKey;
        /**
         * The size of the disk in GB.
         */
        diskSizeGb?: string | null;
        /**
         * [Input Only] Whether to force attach the regional disk even if it's
         * currently attached to another instance. If you try to force attach a zonal
         * disk to an instance, you will receive an error.
         */
        forceAttach?: boolean | null;
        /**
         * A list of features to enable on the guest operating system. Applicable
         * only for bootable images. Read
         * Enabling guest operating system features to see a list of available
         * options.
         */
        guestOsFeatures?: Schema$GuestOsFeature[];
        /**
         * Output only. [Output Only] A zero-based index to this disk, where 0 is reserved for the
         * boot disk. If you have many disks attached to an instance, each
         * disk would have a unique index number.
         */
        index?: number | null;
        /**
         * [Input Only] Specifies the parameters for a new disk that will be created
         * alongside the new instance. Use initialization parameters to create boot
         * disks or local SSDs attached to the new instance.
         *
         * This property is mutually exclusive with the source property;
         * you can only define one or the other, but not both.
         */
        initializeParams?: Schema$AttachedDiskInitializeParams;
        /**
         * Specifies the disk interface to use for attaching this disk, which is
         * either SCSI or NVME. For most machine types, the
         * default is SCSI. Local SSDs can use either NVME or SCSI.
         * In certain configurations, persistent disks can use NVMe. For more
         * information, seeAbout
         * persistent disks.
         */
        interface?: string | null;
        /**
         * Output only. [Output Only] Type of the resource. Alwayscompute#attachedDisk for attached disks.
         */
        kind?: string | null;
        /**
         * Output only. [Output Only] Any valid publicly visible licenses.
         */
        licenses?: string[] | null;
        /**
         * The mode in which to attach this disk, either READ_WRITE orREAD_ONLY. If not specified, the default is to attach the disk
         * in READ_WRITE mode.
         */
        mode?: string | null;
        /**
         * Output only. For LocalSSD disks on VM Instances in STOPPED or SUSPENDED state, this
         * field is set to PRESERVED if the LocalSSD data has been saved
         * to a persistent location by customer request.  (see the
         * discard_local_ssd option on Stop/Suspend).
         * Read-only in the api.
         */
        savedState?: string | null;
        /**
         * Output only. [Output Only] shielded vm initial state stored on disk
         */
        shieldedInstanceInitialState?: Schema$InitialStateConfig;
        /**
         * Specifies a valid partial or full URL to an existing Persistent Disk
         * resource. When creating a new instance boot disk, one ofinitializeParams.sourceImage orinitializeParams.sourceSnapshot or disks.source
         * is required.
         *
         * If desired, you can also attach existing non-root persistent disks using
         * this property. This field is only applicable for persistent disks.
         *
         * Note that for InstanceTemplate, specify the disk name for zonal disk,
         * and the URL for regional disk.
         */
        source?: string | null;
        /**
         * Specifies the type of the disk, either SCRATCH orPERSISTENT. If not specified, the default isPERSISTENT.
         */
        type?: string | null;
    }

    export interface Schema$AcceleratorConfig {
        /**
         * The number of the guest accelerator cards exposed to this instance.
         */
        acceleratorCount?: number | null;
        /**
         * Full or partial URL of the accelerator type resource to attach to this
         * instance. For example:projects/my-project/zones/us-central1-c/acceleratorTypes/nvidia-tesla-p100
         * If you are creating an instance template, specify only the
         * accelerator name.
         * See GPUs on Compute Engine
         * for a full list of accelerator types.
         */
        acceleratorType?: string | null;
    }

    export interface Schema$Metadata {
        /**
         * Specifies a fingerprint for this request, which is essentially a hash of
         * the metadata's contents and used for optimistic locking. The
         * fingerprint is initially generated by Compute Engine and changes after
         * every request to modify or update metadata. You must always provide an
         * up-to-date fingerprint hash in order to update or change metadata,
         * otherwise the request will fail with error412 conditionNotMet.
         *
         * To see the latest fingerprint, make a get() request to
         * retrieve the resource.
         */
        fingerprint?: string | null;
        /**
         * Array of key/value pairs. The total size of all keys and values must be
         * less than 512 KB.
         */
        items?: Array<{
            key?: string;
            value?: string;
        }> | null;
        /**
         * Output only. [Output Only] Type of the resource. Always compute#metadata
         * for metadata.
         */
        kind?: string | null;
    }

    export interface Schema$NetworkInterface {
        /**
         * An array of configurations for this interface. Currently, only one access
         * config, ONE_TO_ONE_NAT, is supported. If there are noaccessConfigs specified, then this instance will have
         * no external internet access.
         */
        accessConfigs?: Schema$AccessConfig[];
        /**
         * An array of alias IP ranges for this network interface.
         * You can only specify this field for network interfaces in VPC networks.
         */
        aliasIpRanges?: Schema$AliasIpRange[];
        /**
         * An array of alias IPv6 ranges for this network interface.
         * You can only specify this field for network interfaces in VPC networks.
         */
        aliasIpv6Ranges?: Schema$AliasIpRange[];
        /**
         * Optional. If true, DNS resolution will be enabled over this interface. Only valid
         * with network_attachment.
         */
        enableVpcScopedDns?: boolean | null;
        /**
         * Fingerprint hash of contents stored in this network interface.
         * This field will be ignored when inserting an Instance or
         * adding a NetworkInterface. An up-to-date
         * fingerprint must be provided in order to update theNetworkInterface. The request will fail with error400 Bad Request if the fingerprint is not provided, or412 Precondition Failed if the fingerprint is out of date.
         */
        fingerprint?: string | null;
        /**
         * Indicate whether igmp query is enabled on the network interface
         * or not. If enabled, also indicates the version of IGMP supported.
         */
        igmpQuery?: string | null;
        /**
         * The prefix length of the primary internal IPv6 range.
         */
        internalIpv6PrefixLength?: number | null;
        /**
         * An array of IPv6 access configurations for this interface. Currently, only
         * one IPv6 access config, DIRECT_IPV6, is supported. If there
         * is no ipv6AccessConfig specified, then this instance will
         * have no external IPv6 Internet access.
         */
        ipv6AccessConfigs?: Schema$AccessConfig[];
        /**
         * Output only. [Output Only] One of EXTERNAL, INTERNAL to indicate whether the IP can be
         * accessed from the Internet. This field is always inherited from its
         * subnetwork.
         *
         * Valid only if stackType is IPV4_IPV6.
         */
        ipv6AccessType?: string | null;
        /**
         * An IPv6 internal network address for this network interface. To
         * use a static internal IP address, it must be unused and in the same region
         * as the instance's zone. If not specified, Google Cloud will automatically
         * assign an internal IPv6 address from the instance's subnetwork.
         */
        ipv6Address?: string | null;
        /**
         * Output only. [Output Only] Type of the resource. Alwayscompute#networkInterface for network interfaces.
         */
        kind?: string | null;
        /**
         * [Output Only] The name of the network interface, which is generated by the
         * server. For a VM, the network interface uses the nicN naming
         * format. Where N is a value between 0 and7. The default interface value is nic0.
         */
        name?: string | null;
        /**
         * URL of the VPC network resource for this instance. When creating an
         * instance, if neither the network nor the subnetwork is specified, the
         * default network global/networks/default is used. If the
         * selected project doesn't have the default network, you must specify a
         * network or subnet. If the network is not specified but the subnetwork is
         * specified, the network is inferred.
         *
         * If you specify this property, you can specify the network as
         * a full or partial URL. For example, the following are all valid URLs:
         *
         *
         *       - https://www.googleapis.com/compute/v1/projects/project/global/networks/network
         *       - projects/project/global/networks/network
         *       - global/networks/default
         */
        network?: string | null;
        /**
         * The URL of the network attachment that this interface should connect
         * to in the following format:
         * projects/{project_number\}/regions/{region_name\}/networkAttachments/{network_attachment_name\}.
         */
        networkAttachment?: string | null;
        /**
         * An IPv4 internal IP address to assign to the instance for this network
         * interface. If not specified by the user, an unused internal IP is
         * assigned by the system.
         */
        networkIP?: string | null;
        /**
         * The type of vNIC to be used on this interface. This may be gVNIC or
         * VirtioNet.
         */
        nicType?: string | null;
        /**
         * Name of the parent network interface of a dynamic network interface.
         */
        parentNicName?: string | null;
        /**
         * The networking queue count that's specified by users for the network
         * interface. Both Rx and Tx queues will be set to this number. It'll be empty
         * if not specified by the users.
         */
        queueCount?: number | null;
        /**
         * Optional. Producer Service's Service class Id for the region of this network
         * interface. Can only be used with network_attachment. It is not possible to
         * use on its own however, network_attachment can be used without
         * service_class_id.
         */
        serviceClassId?: string | null;
        /**
         * The stack type for this network interface. To assign only IPv4 addresses,
         * use IPV4_ONLY. To assign both IPv4 and IPv6 addresses, useIPV4_IPV6. If not specified, IPV4_ONLY is used.
         *
         * This field can be both set at instance creation and update network
         * interface operations.
         */
        stackType?: string | null;
        /**
         * The URL of the Subnetwork resource for this instance. If the network
         * resource is inlegacy
         * mode, do not specify this field. If the network is in auto subnet
         * mode, specifying the subnetwork is optional. If the network is in custom
         * subnet mode, specifying the subnetwork is required. If you specify this
         * field, you can specify the subnetwork as a full or partial URL. For
         * example, the following are all valid URLs:
         *
         *
         *       - https://www.googleapis.com/compute/v1/projects/project/regions/region/subnetworks/subnetwork
         *    - regions/region/subnetworks/subnetwork
         */
        subnetwork?: string | null;
        /**
         * VLAN tag of a dynamic network interface, must be  an integer in the range
         * from 2 to 255 inclusively.
         */
        vlan?: number | null;
    }

    export interface Schema$NetworkPerformanceConfig {
        totalEgressBandwidthTier?: string | null;
    }

    export interface Schema$ReservationAffinity {
        /**
         * Specifies the type of reservation from which this instance can consume
         * resources: ANY_RESERVATION (default),SPECIFIC_RESERVATION, or NO_RESERVATION. See
         * Consuming reserved instances for examples.
         */
        consumeReservationType?: string | null;
        /**
         * Corresponds to the label key of a reservation resource. To target aSPECIFIC_RESERVATION by name, specifygoogleapis.com/reservation-name as the key and specify
         * the name of your reservation as its value.
         */
        key?: string | null;
        /**
         * Corresponds to the label values of a reservation resource. This can be
         * either a name to a reservation in the same project or
         * "projects/different-project/reservations/some-reservation-name" to target a
         * shared reservation in the same zone but in a different project.
         */
        values?: string[] | null;
    }

    export interface Schema$Scheduling {
        /**
         * Specifies whether the instance should be automatically restarted if it is
         * terminated by Compute Engine (not terminated by a user). You can only set
         * the automatic restart option for standard instances.Preemptible instances
         * cannot be automatically restarted.
         *
         * By default, this is set to true so an instance is
         * automatically restarted if it is terminated by Compute Engine.
         */
        automaticRestart?: boolean | null;
        /**
         * Specifies the availability domain to place the instance in. The value
         * must be a number between 1 and the number of availability domains
         * specified in the spread placement policy attached to the instance.
         */
        availabilityDomain?: number | null;
        gracefulShutdown?: Schema$SchedulingGracefulShutdown;
        /**
         * Specify the time in seconds for host error detection, the value must be
         * within the range of [90, 330] with the increment of 30, if unset, the
         * default behavior of host error recovery will be used.
         */
        hostErrorTimeoutSeconds?: number | null;
        /**
         * Specifies the termination action for the instance.
         */
        instanceTerminationAction?: string | null;
        /**
         * Specifies the maximum amount of time a Local Ssd Vm should wait while
         * recovery of the Local Ssd state is attempted. Its value should be in
         * between 0 and 168 hours with hour granularity and the default value being 1
         * hour.
         */
        localSsdRecoveryTimeout?: Schema$Duration;
        /**
         * An opaque location hint used to place the instance close to other
         * resources.
         * This field is for use by internal tools that use the public API.
         */
        locationHint?: string | null;
        /**
         * Specifies the max run duration for the given instance. If specified,
         * the instance termination action will be performed at the end of the run
         * duration.
         */
        maxRunDuration?: Schema$Duration;
        /**
         * The minimum number of virtual CPUs this instance will consume when running
         * on a sole-tenant node.
         */
        minNodeCpus?: number | null;
        /**
         * A set of node affinity and anti-affinity configurations. Refer toConfiguring node
         * affinity for more information.
         * Overrides reservationAffinity.
         */
        nodeAffinities?: Schema$SchedulingNodeAffinity[];
        /**
         * Defines the maintenance behavior for this instance. For standard instances,
         * the default behavior is MIGRATE. Forpreemptible instances,
         * the default and only possible behavior is TERMINATE. For more
         * information, see
         *  Set
         *  VM host maintenance policy.
         */
        onHostMaintenance?: string | null;
        onInstanceStopAction?: Schema$SchedulingOnInstanceStopAction;
        /**
         * Defines whether the instance is preemptible. This can only be set during
         * instance creation or while the instance isstopped and
         * therefore, in a `TERMINATED` state. SeeInstance Life
         * Cycle for more information on the possible instance states.
         */
        preemptible?: boolean | null;
        /**
         * Specifies the Metadata Service preemption notice duration before the GCE ACPI G2
         * Soft Off signal is triggered for Spot VMs only. If not specified,
         * there will be no wait before the G2 Soft Off signal is triggered.
         */
        preemptionNoticeDuration?: Schema$Duration;
        /**
         * Specifies the provisioning model of the instance.
         */
        provisioningModel?: string | null;
        /**
         * Default is false and there will be 120 seconds between GCE ACPI G2 Soft
         * Off and ACPI G3 Mechanical
         * Off for Standard VMs and 30 seconds for Spot VMs.
         */
        skipGuestOsShutdown?: boolean | null;
        /**
         * Specifies the timestamp, when the instance will be terminated, inRFC3339 text format. If specified, the instance
         * termination action will be performed at the termination time.
         */
        terminationTime?: string | null;
    }

    export interface Schema$ServiceAccount {
        /**
         * Email address of the service account.
         */
        email?: string | null;
        /**
         * The list of scopes to be made available for this service account.
         */
        scopes?: string[] | null;
    }

    export interface Schema$ShieldedInstanceConfig {
        /**
         * Defines whether the instance has integrity monitoring enabled.Enabled by
         * default.
         */
        enableIntegrityMonitoring?: boolean | null;
        /**
         * Defines whether the instance has Secure Boot enabled.Disabled by
         * default.
         */
        enableSecureBoot?: boolean | null;
        /**
         * Defines whether the instance has the vTPM enabled.Enabled by
         * default.
         */
        enableVtpm?: boolean | null;
    }

    export interface Schema$Tags {
        /**
         * Specifies a fingerprint for this request, which is essentially a hash of
         * the tags' contents and used for optimistic locking. The
         * fingerprint is initially generated by Compute Engine and changes after
         * every request to modify or update tags. You must always provide an
         * up-to-date fingerprint hash in order to update or change tags.
         *
         * To see the latest fingerprint, make get() request to the
         * instance.
         */
        fingerprint?: string | null;
        /**
         * An array of tags. Each tag must be 1-63 characters long, and comply
         * with RFC1035.
         */
        items?: string[] | null;
    }

    export interface Schema$WorkloadIdentityConfig {
        identity?: string | null;
        identityCertificateEnabled?: boolean | null;
    }

    export interface Schema$DiskInstantiationConfig {
        /**
         * Specifies whether the disk will be auto-deleted when the instance is
         * deleted (but not when the disk is detached from the instance).
         */
        autoDelete?: boolean | null;
        /**
         * The custom source image to be used to restore this disk when instantiating
         * this instance template.
         */
        customImage?: string | null;
        /**
         * Specifies the device name of the disk to which the configurations apply to.
         */
        deviceName?: string | null;
        /**
         * Specifies whether to include the disk and what image to use. Possible
         * values are:
         *
         *
         *      - source-image: to use the same image that was used to
         *      create the source instance's corresponding disk. Applicable to the boot
         *      disk and additional read-write disks.
         *      - source-image-family: to use the same image family that
         *      was used to create the source instance's corresponding disk. Applicable
         *      to the boot disk and additional read-write disks.
         *      - custom-image: to use a user-provided image url for disk
         *      creation. Applicable to the boot disk and additional read-write
         *      disks.
         *    - attach-read-only: to attach a read-only
         *      disk. Applicable to read-only disks.
         *      - do-not-include: to exclude a disk from the template.
         *      Applicable to additional read-write disks, local SSDs, and read-only
         *      disks.
         */
        instantiateFrom?: string | null;
    }

    export interface Schema$StatefulPolicyPreservedStateDiskDevice {
        /**
         * These stateful disks will never be deleted during autohealing,
         * update or VM instance recreate operations.
         * This flag is used to configure if the disk should be deleted after it
         * is no longer used by the group, e.g. when the given instance or
         * the whole group is deleted. Note: disks attached inREAD_ONLY mode cannot be auto-deleted.
         */
        autoDelete?: string | null;
    }

    export interface Schema$StatefulPolicyPreservedStateNetworkIp {
        /**
         * These stateful IPs will never be released during autohealing,
         * update or VM instance recreate operations.
         * This flag is used to configure if the IP reservation should be deleted
         * after it is no longer used by the group, e.g. when the given instance
         * or the whole group is deleted.
         */
        autoDelete?: string | null;
    }

    export interface Schema$InstanceGroupManagerStatusAcceleratorTopologyAcceleratorTopologyStateDetails {
        /**
         * Output only. Encountered errors.
         */
        error?: {
            errors?: Array<{
                code?: string;
                errorDetails?: Array<{
                    errorInfo?: Schema$ErrorInfo;
                    help?: Schema$Help;
                    localizedMessage?: Schema$LocalizedMessage;
                    quotaInfo?: Schema$QuotaExceededInfo;
                }>;
                location?: string;
                message?: string;
            }>;
        } | null;
        /**
         * Output only. Timestamp is shown only if there is an error. The field
         * has // RFC3339 //
         * text format.
         */
        timestamp?: string | null;
    }

    export interface Schema$InstanceGroupManagerStatusBulkInstanceOperationLastProgressCheck {
        /**
         * Output only. Errors encountered during bulk instance operation.
         */
        error?: {
            errors?: Array<{
                code?: string;
                errorDetails?: Array<{
                    errorInfo?: Schema$ErrorInfo;
                    help?: Schema$Help;
                    localizedMessage?: Schema$LocalizedMessage;
                    quotaInfo?: Schema$QuotaExceededInfo;
                }>;
                location?: string;
                message?: string;
            }>;
        } | null;
        /**
         * Output only. Timestamp of the last progress check of bulk instance
         * operation. Timestamp is in RFC3339 text format.
         */
        timestamp?: string | null;
    }

    export interface Schema$InstanceGroupManagerStatusStatefulPerInstanceConfigs {
        /**
         * Output only. A bit indicating if all of the group's per-instance configurations
         * (listed in the output of a listPerInstanceConfigs API call) have
         * status EFFECTIVE or there are no per-instance-configs.
         */
        allEffective?: boolean | null;
    }

    export interface Schema$PreservedStatePreservedNetworkIpIpAddress {
        /**
         * The URL of the reservation for this IP address.
         */
        address?: string | null;
        /**
         * An IPv4 internal network address to assign to the instance for this
         * network interface.
         */
        literal?: string | null;
    }

    export interface Schema$Status {
        /**
         * The status code, which should be an enum value of google.rpc.Code.
         */
        code?: number | null;
        /**
         * A list of messages that carry the error details.  There is a common set of
         * message types for APIs to use.
         */
        details?: Array<{
            [key: string]: any;
        }> | null;
        /**
         * A developer-facing error message, which should be in English. Any
         * user-facing error message should be localized and sent in the
         * google.rpc.Status.details field, or localized by the client.
         */
        message?: string | null;
    }

    export interface Schema$CustomerEncryptionKey {
        /**
         * The name of the encryption key that is stored in Google Cloud KMS.
         * For example:
         *
         * "kmsKeyName": "projects/kms_project_id/locations/region/keyRings/
         * key_region/cryptoKeys/key
         *
         * The fully-qualifed key name may be returned for resource GET requests. For
         * example:
         *
         * "kmsKeyName": "projects/kms_project_id/locations/region/keyRings/
         * key_region/cryptoKeys/key
         * /cryptoKeyVersions/1
         */
        kmsKeyName?: string | null;
        /**
         * The service account being used for the encryption request for the given KMS
         * key. If absent, the Compute Engine default service account is used.
         * For example:
         *
         * "kmsKeyServiceAccount": "name@project_id.iam.gserviceaccount.com/
         */
        kmsKeyServiceAccount?: string | null;
        /**
         * [DEPRECATED] CSEK is no longer supported. Use CMEK instead.
         * Specifies a 256-bit customer-supplied
         * encryption key, encoded in RFC
         * 4648 base64 to either encrypt or decrypt this resource. You can
         * provide either the rawKey or thersaEncryptedKey.
         * For example:
         *
         * "rawKey":
         * "SGVsbG8gZnJvbSBHb29nbGUgQ2xvdWQgUGxhdGZvcm0="
         */
        rawKey?: string | null;
        /**
         * [DEPRECATED] CSEK is no longer supported. Use CMEK instead.
         * Specifies an RFC 4648 base64 encoded, RSA-wrapped 2048-bit
         * customer-supplied encryption key to either encrypt or decrypt this
         * resource. You can provide either the rawKey or thersaEncryptedKey.
         * For example:
         *
         * "rsaEncryptedKey":
         * "ieCx/NcW06PcT7Ep1X6LUTc/hLvUDYyzSZPPVCVPTVEohpeHASqC8uw5TzyO9U+Fka9JFH
         * z0mBibXUInrC/jEk014kCK/NPjYgEMOyssZ4ZINPKxlUh2zn1bV+MCaTICrdmuSBTWlUUiFoD
         * D6PYznLwh8ZNdaheCeZ8ewEXgFQ8V+sDroLaN3Xs3MDTXQEMMoNUXMCZEIpg9Vtp9x2oe=="
         *
         * The key must meet the following requirements before you can provide it to
         * Compute Engine:
         *
         *    1. The key is wrapped using a RSA public key certificate provided by
         *    Google.
         *    2. After being wrapped, the key must be encoded in RFC 4648 base64
         *    encoding.
         *
         * Gets the RSA public key certificate provided by Google at:
         *
         *
         * https://cloud-certs.storage.googleapis.com/google-cloud-csek-ingress.pem
         */
        rsaEncryptedKey?: string | null;
        /**
         * [DEPRECATED] CSEK is no longer supported. Use CMEK instead.
         * [Output only] TheRFC
         * 4648 base64 encoded SHA-256 hash of the customer-supplied
         * encryption key that protects this resource.
         */
        sha256?: string | null;
    }

    export interface Schema$GuestOsFeature {
        /**
         * The ID of a supported feature. To add multiple values, use commas to
         * separate values. Set to one or more of the following values:
         *
         *    - VIRTIO_SCSI_MULTIQUEUE
         *    - WINDOWS
         *    - MULTI_IP_SUBNET
         *    - UEFI_COMPATIBLE
         *    - GVNIC
         *    - SEV_CAPABLE
         *    - SUSPEND_RESUME_COMPATIBLE
         *    - SEV_LIVE_MIGRATABLE_V2
         *    - SEV_SNP_CAPABLE
         *    - TDX_CAPABLE
         *    - IDPF
         *    - SNP_SVSM_CAPABLE
         *    - CCA_CAPABLE
         *    - SUSPEND_SAFE_FPR
         *
         *
         * For more information, see
         * Enabling guest operating system features.
         */
        type?: string | null;
    }

    export interface Schema$AttachedDiskInitializeParams {
        /**
         * The architecture of the attached disk. Valid values are
         * arm64 or x86_64.
         */
        architecture?: string | null;
        /**
         * An optional description. Provide this property when creating the disk.
         */
        description?: string | null;
        /**
         * Specifies the disk name. If not specified, the default is to use the name
         * of the instance. If a disk with the same name already exists in the given
         * region, the existing disk is attached to the new instance and the
         * new disk is not created.
         */
        diskName?: string | null;
        /**
         * Specifies the size of the disk in base-2 GB. The size must be at least
         * 10 GB. If you specify a sourceImage, which is required for
         * boot disks, the default size is the size of the sourceImage.
         * If you do not specify a sourceImage, the default disk size
         * is 500 GB.
         */
        diskSizeGb?: string | null;
        /**
         * Specifies the disk type used for the boot disk or an additional data
         * disk. For valid disk type values, see
         * Supported types for Hyperdisk volumes and
         * Persistent Disk type variables.
         *
         * When creating a single instance, you must provide either the full or
         * partial URL of the disk type. For example, the following values are
         * valid:
         *
         *
         *      - https://www.googleapis.com/compute/v1/projects/project/zones/zone/diskTypes/diskType
         *      - projects/project/zones/zone/diskTypes/diskType
         *      - zones/zone/diskTypes/diskType
         *
         *
         *
         * When creating an instance template, instance flexibility policy, or when
         * creating or updating an all-instances configuration, you specify the
         * disk type without a URL, for example, hyperdisk-balanced.
         *
         * If you omit this field for a disk, the default disk type depends on
         * the instance's machine series, as follows.
         *
         *
         *     - For first- and second-generation machine series like N1, N2, T2, and
         *     M1, the
         *        default disk type is Standard Persistent Disk
         *        (pd-standard).
         *     - For C3, C3D, and M3 the default is Balanced Persistent Disk
         *     (pd-balanced).
         *    - For other third-generation machine
         *     series like A3, H3, Z3, all
         *         fourth-generation types like C4, N4, M4, and newer machine series,
         *         the default is Hyperdisk Balanced
         *         (hyperdisk-balanced).
         *
         *
         *
         * The disk type you specify must be compatible with the instance's machine
         * series. For a list of machine series that support Persistent Disk, see Machine
         * series support for Persistent Disk.
         *
         * For a list of machine series that support Hyperdisk, seeMachine
         * series support for Hyperdisk.
         */
        diskType?: string | null;
        /**
         * Whether this disk is using confidential compute mode.
         */
        enableConfidentialCompute?: boolean | null;
        /**
         * Labels to apply to this disk. These can be later modified by thedisks.setLabels method. This field is only applicable for
         * persistent disks.
         */
        labels?: {
            [key: string]: string;
        } | null;
        /**
         * A list of publicly visible licenses. Reserved for Google's use.
         */
        licenses?: string[] | null;
        /**
         * Specifies which action to take on instance update with this disk. Default
         * is to use the existing disk.
         */
        onUpdateAction?: string | null;
        /**
         * Indicates how many IOPS to provision for the disk. This sets the number
         * of I/O operations per second that the disk can handle. Values must be
         * between 10,000 and 120,000. For more details, see theExtreme persistent
         * disk documentation.
         */
        provisionedIops?: string | null;
        /**
         * Indicates how much throughput to provision for the disk. This sets the
         * number of throughput mb per second that the disk can handle. Values must
         * greater than or equal to 1.
         */
        provisionedThroughput?: string | null;
        /**
         * Required for each regional disk associated with the instance. Specify
         * the URLs of the zones where the disk should be replicated to.
         * You must provide exactly two replica zones, and one zone must be the same
         * as the instance zone.
         */
        replicaZones?: string[] | null;
        /**
         * Input only. Resource manager tags to be bound to the disk. Tag keys and values
         * have the same definition as resource
         * manager tags. Keys and values can be either in numeric format,
         * such as `tagKeys/{tag_key_id\}` and `tagValues/{tag_value_id\}` or in
         * namespaced format such as `{org_id|project_id\}/{tag_key_short_name\}` and
         * `{tag_value_short_name\}`. The field is ignored (both PUT & PATCH) when
         * empty.
         */
        resourceManagerTags?: {
            [key: string]: string;
        } | null;
        /**
         * Resource policies applied to this disk for automatic snapshot creations.
         * Specified using the full or partial URL. For instance template, specify
         * only the resource policy name.
         */
        resourcePolicies?: string[] | null;
        /**
         * The source image to create this disk. When creating a new instance boot
         * disk, one of initializeParams.sourceImage orinitializeParams.sourceSnapshot or disks.source
         * is required.
         *
         * To create a disk with one of the public operating system
         * images, specify the image by its family name. For example, specifyfamily/debian-9 to use the latest Debian 9 image:
         *
         * projects/debian-cloud/global/images/family/debian-9
         *
         *
         * Alternatively, use a specific version of a public operating system image:
         *
         * projects/debian-cloud/global/images/debian-9-stretch-vYYYYMMDD
         *
         *
         * To create a disk with a custom image that you created, specify the
         * image name in the following format:
         *
         * global/images/my-custom-image
         *
         *
         * You can also specify a custom image by its image family, which returns
         * the latest version of the image in that family. Replace the image name
         * with family/family-name:
         *
         * global/images/family/my-image-family
         *
         *
         * If the source image is deleted later, this field will not be set.
         */
        sourceImage?: string | null;
        /**
         * Thecustomer-supplied
         * encryption key of the source image. Required if the source image is
         * protected by a customer-supplied encryption key.
         *
         * InstanceTemplate and InstancePropertiesPatch do not storecustomer-supplied
         * encryption keys, so you cannot create disks for instances in a managed instance group if the
         * source images are encrypted with your own keys.
         */
        sourceImageEncryptionKey?: Schema$CustomerEncryptionKey;
        /**
         * The source snapshot to create this disk. When creating a new instance
         * boot disk, one of initializeParams.sourceSnapshot orinitializeParams.sourceImage or disks.source
         * is required.
         *
         * To create a disk with a snapshot that you created, specify the
         * snapshot name in the following format:
         *
         * global/snapshots/my-backup
         *
         *
         * If the source snapshot is deleted later, this field will not be set.
         *
         * Note: You cannot create VMs in bulk using a snapshot as the source. Use
         * an image instead when you create VMs using
         * the bulk
         * insert method.
         */
        sourceSnapshot?: string | null;
        /**
         * Thecustomer-supplied
         * encryption key of the source snapshot.
         */
        sourceSnapshotEncryptionKey?: Schema$CustomerEncryptionKey;
        /**
         * The storage pool in which the new disk is created. You can provide
         * this as a partial or full URL to the resource. For example, the following
         * are valid values:
         *
         *
         *      - https://www.googleapis.com/compute/v1/projects/project/zones/zone/storagePools/storagePool
         *      - projects/project/zones/zone/storagePools/storagePool
         *    - zones/zone/storagePools/storagePool
         */
        storagePool?: string | null;
    }

    export interface Schema$InitialStateConfig {
        /**
         * The Key Database (db).
         */
        dbs?: Schema$FileContentBuffer[];
        /**
         * The forbidden key database (dbx).
         */
        dbxs?: Schema$FileContentBuffer[];
        /**
         * The Key Exchange Key (KEK).
         */
        keks?: Schema$FileContentBuffer[];
        /**
         * The Platform Key (PK).
         */
        pk?: Schema$FileContentBuffer;
    }

    export interface Schema$AccessConfig {
        /**
         * Applies to ipv6AccessConfigs only.
         * The first IPv6 address of the external IPv6 range associated
         * with this instance, prefix length is stored inexternalIpv6PrefixLength in ipv6AccessConfig. To
         * use a static external IP address, it must be unused and in the same region
         * as the instance's zone. If not specified, Google Cloud will automatically
         * assign an external IPv6 address from the instance's subnetwork.
         */
        externalIpv6?: string | null;
        /**
         * Applies to ipv6AccessConfigs only. The prefix length of the
         * external IPv6 range.
         */
        externalIpv6PrefixLength?: number | null;
        /**
         * Output only. [Output Only] Type of the resource. Alwayscompute#accessConfig for access configs.
         */
        kind?: string | null;
        /**
         * The name of this access configuration. In accessConfigs
         * (IPv4), the default and recommended name is External NAT, but
         * you can use any arbitrary string, such as My external IP orNetwork Access. In ipv6AccessConfigs, the
         * recommend name is External IPv6.
         */
        name?: string | null;
        /**
         * Applies to accessConfigs (IPv4) only. Anexternal IP
         * address associated with this instance. Specify an unused static
         * external IP address available to the project or leave this field undefined
         * to use an IP from a shared ephemeral IP address pool. If you specify a
         * static external IP address, it must live in the same region as the zone of
         * the instance.
         */
        natIP?: string | null;
        /**
         * This signifies the networking tier used for configuring this access
         * configuration and can only take the following values: PREMIUM,STANDARD.
         *
         * If an AccessConfig is specified without a valid external IP address, an
         * ephemeral IP will be created with this networkTier.
         *
         * If an AccessConfig with a valid external IP address is specified, it must
         * match that of the networkTier associated with the Address resource owning
         * that IP.
         */
        networkTier?: string | null;
        /**
         * The DNS domain name for the public PTR record.
         *
         * You can set this field only if the `setPublicPtr` field is enabled inaccessConfig. If this field is unspecified inipv6AccessConfig, a default PTR record will be created for
         * first IP in associated external IPv6 range.
         */
        publicPtrDomainName?: string | null;
        /**
         * The resource URL for the security policy associated with this access
         * config.
         */
        securityPolicy?: string | null;
        /**
         * Specifies whether a public DNS 'PTR' record should be created to map the
         * external IP address of the instance to a DNS domain name.
         *
         * This field is not used in ipv6AccessConfig. A default PTR
         * record will be created if the VM has external IPv6 range associated.
         */
        setPublicPtr?: boolean | null;
        /**
         * The type of configuration. In accessConfigs (IPv4), the
         * default and only option is ONE_TO_ONE_NAT. Inipv6AccessConfigs, the default and only option isDIRECT_IPV6.
         */
        type?: string | null;
    }

    export interface Schema$AliasIpRange {
        /**
         * The IP alias ranges to allocate for this interface. This IP CIDR range
         * must belong to the specified subnetwork and cannot contain IP addresses
         * reserved by system or used by other network interfaces. This range may be
         * a single IP address (such as 10.2.3.4), a netmask (such as/24) or a CIDR-formatted string (such as10.1.2.0/24).
         */
        ipCidrRange?: string | null;
        /**
         * The name of a subnetwork secondary IP range from which to allocate an IP
         * alias range. If not specified, the primary range of the subnetwork is used.
         */
        subnetworkRangeName?: string | null;
    }

    export interface Schema$SchedulingGracefulShutdown {
        /**
         * Opts-in for graceful shutdown.
         */
        enabled?: boolean | null;
        /**
         * The time allotted for the instance to gracefully shut down. If the
         * graceful shutdown isn't complete after this time, then the instance
         * transitions to the STOPPING state.
         */
        maxDuration?: Schema$Duration;
    }

    export interface Schema$SchedulingNodeAffinity {
        /**
         * Corresponds to the label key of Node resource.
         */
        key?: string | null;
        /**
         * Defines the operation of node selection. Valid operators areIN for affinity and NOT_IN for anti-affinity.
         */
        operator?: string | null;
        /**
         * Corresponds to the label values of Node resource.
         */
        values?: string[] | null;
    }

    export interface Schema$SchedulingOnInstanceStopAction {
        /**
         * If true, the contents of any attached Local SSD disks will be discarded
         * else, the Local SSD data will be preserved when the instance is stopped
         * at the end of the run duration/termination time.
         */
        discardLocalSsd?: boolean | null;
    }

