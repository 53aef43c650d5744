// Names of the object types the libraries and declared variables add.
import { PRODUCT } from '../names/index.js';

export const URL_TYPE = `${PRODUCT}.URL`;
export const QUANTITY_TYPE = `${PRODUCT}.Quantity`;
export const IP_TYPE = 'net.IP';
export const CIDR_TYPE = 'net.CIDR';
export const AUTHORIZER_TYPE = `${PRODUCT}.authorization.Authorizer`;
export const PATH_CHECK_TYPE = `${PRODUCT}.authorization.PathCheck`;
export const GROUP_CHECK_TYPE = `${PRODUCT}.authorization.GroupCheck`;
export const RESOURCE_CHECK_TYPE = `${PRODUCT}.authorization.ResourceCheck`;
export const DECISION_TYPE = `${PRODUCT}.authorization.Decision`;
export const USER_INFO_TYPE = `${PRODUCT}.UserInfo`;
export const ACCESS_REVIEW_TYPE = `${PRODUCT}.SubjectAccessReviewSpec`;
/** Root object type of self and oldSelf. */
export const SELF_TYPE = 'Object';
