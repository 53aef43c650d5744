// Every identifier that carries the product's domain is derived here, so the
// domain is one constant. Real clients hard-code a few upstream spellings; those
// are listed as aliases the gateway accepts.

export const DOMAIN = 'svc.io';
export const UPSTREAM_DOMAIN = 'k8s.io';
/** The upstream domain of label and annotation keys, which kubectl writes on its own (last-applied). */
export const UPSTREAM_LABEL_DOMAIN = 'kubernetes.io';

/** `<prefix>.svc.io`, e.g. group('rbac.authorization') */
export const group = (prefix: string): string => `${prefix}.${DOMAIN}`;
/** `svc.io/<key>` or `<prefix>.svc.io/<key>` label and annotation keys. */
export const labelKey = (key: string, prefix?: string): string =>
  prefix ? `${prefix}.${DOMAIN}/${key}` : `${DOMAIN}/${key}`;

/** A key, type or finalizer the server interprets, in the product's spelling and in upstream's,
 * which manifests written for the platform carry. */
export interface WellKnown { readonly own: string; readonly upstream: string }
/** `svc.io/<key>` and `kubernetes.io/<key>`; with a prefix `<prefix>.svc.io/<key>` and `<prefix>.<upstream domain>/<key>`. */
const wellKnownKey = (key: string, prefix?: string, upstreamDomain = UPSTREAM_LABEL_DOMAIN): WellKnown => ({
  own: labelKey(key, prefix),
  upstream: prefix ? `${prefix}.${upstreamDomain}/${key}` : `${upstreamDomain}/${key}`,
});
/** Whether `value` names `known` in either spelling: the one question the rest of the code asks. */
export const isWellKnown = (value: unknown, known: WellKnown): boolean => value === known.own || value === known.upstream;
/** The value a label or annotation map holds under either spelling of `known` (the product's first). */
export const wellKnownValue = (map: Readonly<Record<string, string>> | undefined, known: WellKnown): string | undefined =>
  map?.[known.own] ?? map?.[known.upstream];
/** A group as typed clients hard-code it (`x.k8s.io`), in the product's spelling (`x.svc.io`); others unchanged. */
export const ownGroup = (name: string): string =>
  (name.endsWith(`.${UPSTREAM_DOMAIN}`) ? `${name.slice(0, -UPSTREAM_DOMAIN.length - 1)}.${DOMAIN}` : name);
/** Whether a group is one of the product's renamed groups (`x.svc.io`), also served as `x.k8s.io`. */
export const isRenamedGroup = (name: string): boolean => name.endsWith(`.${DOMAIN}`);
/** A renamed group in its upstream spelling (`x.svc.io` -> `x.k8s.io`); others unchanged. */
export const upstreamGroup = (name: string): string =>
  (isRenamedGroup(name) ? `${name.slice(0, -DOMAIN.length - 1)}.${UPSTREAM_DOMAIN}` : name);
/** Groups kubectl posts its reviews to in the upstream spelling (auth can-i, auth whoami, create token):
 * accepted even when the upstream names are not served. */
export const UPSTREAM_REVIEW_GROUPS: readonly string[] = [upstreamGroup(group('authorization')), upstreamGroup(group('authentication'))];
/** `x-svc-<name>` OpenAPI extensions. */
export const extension = (name: string): string => `x-svc-${name}`;
/** The upstream spelling of an extension (`x-kubernetes-<name>`), which operators' schemas carry. */
export const upstreamExtension = (name: string): string => `x-${UPSTREAM_LABEL_DOMAIN.slice(0, UPSTREAM_LABEL_DOMAIN.indexOf('.'))}-${name}`;

export const PRODUCT = 'svc';
export const SERVER_NAME = 'svc-apiserver';

export const NAMESPACE_DEFAULT = 'default';
export const NAMESPACE_SYSTEM = `${PRODUCT}-system`;
export const NAMESPACE_PUBLIC = `${PRODUCT}-public`;
export const NAMESPACE_NODE_LEASE = `${PRODUCT}-node-lease`;
export const INITIAL_NAMESPACES = [NAMESPACE_DEFAULT, NAMESPACE_SYSTEM, NAMESPACE_PUBLIC, NAMESPACE_NODE_LEASE];

/** The service in `default` that fronts the API, and the ServiceCIDR of the default service range. */
export const API_SERVICE = 'kubernetes';
export const SERVICE_CIDR_DEFAULT_NAME = 'kubernetes';
/** Labels of the IPAddress objects the cluster IP allocator creates, and its name. */
export const IPADDRESS_FAMILY_LABEL = labelKey('ip-family', 'ipaddress');
export const IPADDRESS_MANAGED_BY_LABEL = labelKey('managed-by', 'ipaddress');
export const IP_ALLOCATOR = group('ipallocator');
/** The finalizers of the orphan and foreground deletion policies (the platform's, without a domain). */
export const ORPHAN_FINALIZER = 'orphan';
export const FOREGROUND_FINALIZER = 'foregroundDeletion';

/** The label that ties an EndpointSlice to its service. */
export const SERVICE_NAME_LABEL = wellKnownKey('service-name');
/** Labels the server sets in its spelling that clients select on in upstream's (kubectl describe service). */
export const UPSTREAM_LABEL_ALIASES: readonly WellKnown[] = [SERVICE_NAME_LABEL];

/** Finalizer that keeps a namespace until its contents are gone (upstream's is `kubernetes`). */
export const NAMESPACE_FINALIZER: WellKnown = { own: PRODUCT, upstream: 'kubernetes' };
/** Holds a deleted CustomResourceDefinition until its custom objects are gone. */
export const CRD_CLEANUP_FINALIZER = `customresourcecleanup.${group('apiextensions')}`;
/** The label every namespace carries with its own name, so selectors can name namespaces. */
export const NAMESPACE_NAME_LABEL = wellKnownKey('metadata.name');
/** kubectl's client-side apply annotation, which the server never rewrites. */
export const LAST_APPLIED_ANNOTATION = wellKnownKey('last-applied-configuration', 'kubectl');
/** The annotation a CRD of a protected group (the product's or upstream's own) carries: a URL of its approval, or `unapproved...`. */
export const API_APPROVED_ANNOTATION: WellKnown = { own: group('api-approved'), upstream: `api-approved.${UPSTREAM_LABEL_DOMAIN}` };
/** Whether a group is one the project itself owns (`svc.io`, `k8s.io`, `kubernetes.io` and their subdomains). */
export const isProtectedGroup = (name: string): boolean =>
  [DOMAIN, UPSTREAM_DOMAIN, UPSTREAM_LABEL_DOMAIN].some((d) => name === d || name.endsWith(`.${d}`));

export const GROUP_META = group('meta');
export const GROUP_APIDISCOVERY = group('apidiscovery');
export const UPSTREAM_GROUP_META = `meta.${UPSTREAM_DOMAIN}`;
export const UPSTREAM_GROUP_APIDISCOVERY = `apidiscovery.${UPSTREAM_DOMAIN}`;

export const MEDIA_PROTOBUF = `application/vnd.${PRODUCT}.protobuf`;
export const UPSTREAM_MEDIA_PROTOBUF = 'application/vnd.kubernetes.protobuf';

export const GROUP_MASTERS = 'system:masters';
export const USER_ANONYMOUS = 'system:anonymous';
export const GROUP_UNAUTHENTICATED = 'system:unauthenticated';
export const GROUP_AUTHENTICATED = 'system:authenticated';

/** Environment variable of credential plugins. */
export const EXEC_INFO_ENV = `${PRODUCT.toUpperCase()}_EXEC_INFO`;

/** Prefix of the NATS subjects on which storage publishes committed changes. */
export const NATS_EVENTS_PREFIX = `${PRODUCT}.storage.v1.events`;

/** The NATS subject on which the authorization service announces its policy generation. */
export const NATS_AUTHZ_GENERATION_SUBJECT = `${PRODUCT}.authz.v1.generation`;
/** The NATS subject on which the authentication service announces its revocation generation. */
export const NATS_AUTHN_GENERATION_SUBJECT = `${PRODUCT}.authn.v1.generation`;
/** Where a follower of a generation subject asks for it to be announced now. */
export const generationAskSubject = (subject: string): string => `${subject}.ask`;

/** The group of the server's own configuration files (AuthenticationConfiguration, ...). */
export const GROUP_APISERVER_CONFIG = group('apiserver.config');

/** RBAC: the label of the default policy's objects, the annotation that stops their reconciliation,
 * and the labels that aggregate roles into admin, edit and view. */
export const BOOTSTRAPPING_LABEL = wellKnownKey('bootstrapping');
export const BOOTSTRAPPING_RBAC_DEFAULTS = 'rbac-defaults';
/** The RBAC API group. */
export const GROUP_RBAC = group('rbac.authorization');
export const RBAC_AUTOUPDATE_ANNOTATION = wellKnownKey('autoupdate', 'rbac.authorization');
/** Upstream spells the aggregation labels with the group's domain (`rbac.authorization.k8s.io/...`). */
export const aggregateToLabel = (role: 'admin' | 'edit' | 'view'): WellKnown =>
  wellKnownKey(`aggregate-to-${role}`, 'rbac.authorization', UPSTREAM_DOMAIN);
/** A signer name of the platform, e.g. signerName('kube-apiserver-client'). */
export const signerName = (name: string): string => `${DOMAIN}/${name}`;
/** The signer of client certificates the API server accepts, in both spellings. */
export const KUBE_APISERVER_CLIENT_SIGNER = wellKnownKey('kube-apiserver-client');
/** The controller-manager's own identity (its client certificate's common name). */
export const USER_KUBE_CONTROLLER_MANAGER = 'system:kube-controller-manager';
/** The controller-manager as a component: its leader-election Lease in svc-system (upstream `kube-controller-manager`),
 * the reporter of its own Events and the prefix of its user agents. */
export const CONTROLLER_MANAGER_NAME = `${PRODUCT}-controller-manager`;
export const USER_KUBE_SCHEDULER = 'system:kube-scheduler';
export const USER_KUBE_PROXY = 'system:kube-proxy';
export const GROUP_NODES = 'system:nodes';
export const GROUP_MONITORING = 'system:monitoring';
export const GROUP_SERVICEACCOUNTS = 'system:serviceaccounts';

/** Bootstrap tokens (document 2): their Secrets, users, groups and the signed ConfigMap. */
export const SECRET_TYPE_BOOTSTRAP_TOKEN = wellKnownKey('token', 'bootstrap');
export const BOOTSTRAP_TOKEN_SECRET_PREFIX = 'bootstrap-token-';
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const GROUP_BOOTSTRAPPERS = 'system:bootstrappers';
export const CLUSTER_INFO_CONFIGMAP = 'cluster-info';
export const CLUSTER_INFO_KUBECONFIG_KEY = 'kubeconfig';
export const CLUSTER_INFO_JWS_PREFIX = 'jws-kubeconfig-';

/** Service accounts: user names, groups, the private claim of their tokens and the legacy token Secrets. */
export const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:';
export const SERVICE_ACCOUNT_CLAIM = DOMAIN;
export const SECRET_TYPE_SERVICE_ACCOUNT_TOKEN = wellKnownKey('service-account-token');
export const SERVICE_ACCOUNT_NAME_ANNOTATION = wellKnownKey('service-account.name');
export const SERVICE_ACCOUNT_UID_ANNOTATION = wellKnownKey('service-account.uid');
/** The other secret types whose data the server checks. */
export const SECRET_TYPE_DOCKERCFG = wellKnownKey('dockercfg');
export const SECRET_TYPE_DOCKER_CONFIG_JSON = wellKnownKey('dockerconfigjson');
export const SECRET_TYPE_BASIC_AUTH = wellKnownKey('basic-auth');
export const SECRET_TYPE_SSH_AUTH = wellKnownKey('ssh-auth');
export const SECRET_TYPE_TLS = wellKnownKey('tls');
export const LEGACY_TOKEN_INVALID_SINCE_LABEL = wellKnownKey('legacy-token-invalid-since');
/** The issuer of Secret-based tokens and the claims they carry. */
export const LEGACY_SERVICE_ACCOUNT_ISSUER = `${PRODUCT}/serviceaccount`;
export const legacyServiceAccountClaim = (name: string): string => `${DOMAIN}/serviceaccount/${name}`;
/** The key of the cluster CA in the root-CA ConfigMap and in legacy token Secrets. */
export const ROOT_CA_KEY = 'ca.crt';
/** What a system object is for, for people (`svc.io/description`). */
export const DESCRIPTION_ANNOTATION = wellKnownKey('description');
/** The extra keys of a service account's user info. */
export const serviceAccountExtraKey = (name: string): string => labelKey(name, 'authentication');

/** A pod a node agent mirrors from a static manifest. */
export const MIRROR_POD_ANNOTATION = wellKnownKey('config.mirror');
/** The StorageClass a PersistentVolumeClaim names in the beta annotation, before spec.storageClassName. */
export const BETA_STORAGE_CLASS_ANNOTATION = wellKnownKey('storage-class', 'volume.beta');
/** Quota resource names per StorageClass: `<class>.storageclass.storage.svc.io/<resource>`. */
export const STORAGE_CLASS_QUOTA_INFIX = `.storageclass.${group('storage')}/`;
/** The StorageClass annotation that marks the default class. */
export const DEFAULT_STORAGE_CLASS_ANNOTATION = wellKnownKey('is-default-class', 'storageclass');
/** The default-class annotation's older (beta) spelling, still honoured. */
export const BETA_DEFAULT_STORAGE_CLASS_ANNOTATION = wellKnownKey('is-default-class', 'storageclass.beta');
/** The IngressClass annotation that marks the default class. */
export const DEFAULT_INGRESS_CLASS_ANNOTATION = wellKnownKey('is-default-class', 'ingressclass');
/** An Ingress's class as an annotation (before `spec.ingressClassName`), which counts as a class asked for. */
export const INGRESS_CLASS_ANNOTATION = wellKnownKey('ingress.class');
/** The taint a node carries until it reports Ready. */
export const NODE_NOT_READY_TAINT = wellKnownKey('not-ready', 'node');
/** Finalizers that keep a claim while a pod uses it and a volume while a claim is bound to it. */
export const PVC_PROTECTION_FINALIZER = wellKnownKey('pvc-protection');
export const PV_PROTECTION_FINALIZER = wellKnownKey('pv-protection');
/** The prefix of node role labels, `node-role.svc.io/<role>` and `node-role.kubernetes.io/<role>`. */
export const NODE_ROLE_LABEL_PREFIX = wellKnownKey('', 'node-role');
/** An autoscaling/v1 HorizontalPodAutoscaler's annotation holding what only v2 can say. */
export const hpaV2Annotation = (name: string): WellKnown => wellKnownKey(name, 'autoscaling.alpha');

/** The labels the server puts on a Job's pods (besides the unprefixed `job-name` and `controller-uid`). */
export const JOB_NAME_LABEL = wellKnownKey('job-name', 'batch');
export const JOB_CONTROLLER_UID_LABEL = wellKnownKey('controller-uid', 'batch');
/** The Job controller's finalizer on each pod it has not counted yet, so no pod is lost or counted twice. */
export const JOB_TRACKING_FINALIZER = wellKnownKey('job-tracking', 'batch');
/** An Indexed Job's pod index (annotation and label), and per-index failure counts (annotations). */
export const JOB_COMPLETION_INDEX = wellKnownKey('job-completion-index', 'batch');
export const JOB_INDEX_FAILURE_COUNT = wellKnownKey('job-index-failure-count', 'batch');
export const JOB_INDEX_IGNORED_FAILURE_COUNT = wellKnownKey('job-index-ignored-failure-count', 'batch');
/** A Job's `spec.managedBy` naming the built-in controller (`svc.io/job-controller`). */
export const JOB_CONTROLLER_MANAGER = wellKnownKey('job-controller');

/** Pod Security: the namespace labels and audit annotations (`pod-security.svc.io/<key>`), the group of its
 * configuration, and the annotations its checks read (AppArmor and seccomp before their fields existed). */
export const podSecurityKey = (key: string): WellKnown => wellKnownKey(key, 'pod-security');
export const GROUP_POD_SECURITY_CONFIG = group('pod-security.admission.config');
export const APPARMOR_CONTAINER_ANNOTATION_PREFIX = wellKnownKey('', 'container.apparmor.security.beta');
export const SECCOMP_POD_ANNOTATION = wellKnownKey('pod', 'seccomp.security.alpha');
export const SECCOMP_CONTAINER_ANNOTATION_PREFIX = wellKnownKey('', 'container.seccomp.security.alpha');
/** Service-account admission: the annotation that limits a pod to its account's secrets, the prefix of the
 * projected token volume, where it is mounted and the ConfigMap of the cluster's CA every namespace holds. */
export const ENFORCE_MOUNTABLE_SECRETS_ANNOTATION = wellKnownKey('enforce-mountable-secrets');
export const SERVICE_ACCOUNT_VOLUME_PREFIX = `${PRODUCT}-api-access`;
export const SERVICE_ACCOUNT_MOUNT_PATH = `/var/run/secrets/${DOMAIN}/serviceaccount`;
export const ROOT_CA_CONFIGMAP = `${PRODUCT}-root-ca.crt`;
export const DEFAULT_SERVICE_ACCOUNT = 'default';
/** The annotation LimitRanger writes on the pods it gave default resources. */
export const LIMIT_RANGER_ANNOTATION = wellKnownKey('limit-ranger');
/** The NoExecute taints of nodes that are not ready or unreachable, which pods tolerate for a while by default. */
export const TAINT_NODE_NOT_READY = wellKnownKey('not-ready', 'node');
export const TAINT_NODE_UNREACHABLE = wellKnownKey('unreachable', 'node');
/** The scheduling group, whose PriorityClasses the server bootstraps. */
export const GROUP_SCHEDULING = group('scheduling');
export const GROUP_NODE = group('node');
