// Recording only (PersistedRecorder): siddhi-store-rdbms looks a `datasource` up through OSGi's
// DataSourceService, and persisted aggregation requires `datasource`. Outside OSGi there is no
// bundle, so this stand-in for org.osgi.framework.FrameworkUtil (first on the class path) answers
// with a bundle whose context hands out a DataSourceService over PersistedRecorder's pools.
package org.osgi.framework;

import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.Map;

public final class FrameworkUtil {
    public static final Map<String, Object> DATASOURCES = new HashMap<>();

    private FrameworkUtil() {
    }

    public static Bundle getBundle(Class<?> c) {
        ClassLoader cl = FrameworkUtil.class.getClassLoader();
        Object service;
        try {
            Class<?> api = Class.forName("org.wso2.carbon.datasource.core.api.DataSourceService");
            service = Proxy.newProxyInstance(cl, new Class<?>[]{api},
                    (p, m, a) -> m.getName().equals("getDataSource") ? DATASOURCES.get((String) a[0]) : null);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
        ServiceReference<?> ref = (ServiceReference<?>) Proxy.newProxyInstance(cl,
                new Class<?>[]{ServiceReference.class}, (p, m, a) -> null);
        BundleContext ctx = (BundleContext) Proxy.newProxyInstance(cl, new Class<?>[]{BundleContext.class},
                (p, m, a) -> {
                    switch (m.getName()) {
                        case "getServiceReference": return ref;
                        case "getService": return service;
                        default: return null;
                    }
                });
        return (Bundle) Proxy.newProxyInstance(cl, new Class<?>[]{Bundle.class},
                (p, m, a) -> m.getName().equals("getBundleContext") ? ctx : null);
    }

    public static Filter createFilter(String filter) throws InvalidSyntaxException {
        throw new InvalidSyntaxException("not in OSGi", filter);
    }
}
