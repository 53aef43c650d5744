// Where the PKI files live and the names they carry.
import { join, resolve } from 'node:path';

export interface PkiPaths {
  dir: string;
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  /** The controller-manager's client certificate (user system:kube-controller-manager). */
  controllerManagerCert: string;
  controllerManagerKey: string;
}

/** The user name of the admin client certificate and kubeconfig. */
export const ADMIN_USER = 'admin';

/** The files of the PKI under <dataDir>/pki. */
export function pkiPaths(dataDir: string): PkiPaths {
  const dir = join(resolve(dataDir), 'pki');
  return {
    dir,
    caCert: join(dir, 'ca.crt'), caKey: join(dir, 'ca.key'),
    servingCert: join(dir, 'serving.crt'), servingKey: join(dir, 'serving.key'),
    adminCert: join(dir, 'admin.crt'), adminKey: join(dir, 'admin.key'),
    controllerManagerCert: join(dir, 'controller-manager.crt'), controllerManagerKey: join(dir, 'controller-manager.key'),
  };
}

export const adminKubeconfigPath = (dataDir: string): string => join(resolve(dataDir), 'admin.kubeconfig');
