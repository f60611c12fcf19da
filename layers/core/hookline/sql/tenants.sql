-- insert_tenant --
INSERT INTO tenants (id, name, tenant_group) VALUES (%(id)s, %(name)s, %(tenant_group)s)
RETURNING id, name, tenant_group, created_at, external_id

-- get_tenant --
SELECT id, name, tenant_group, created_at FROM tenants WHERE id = %(id)s

-- list_tenants --
SELECT id, name, tenant_group, created_at FROM tenants ORDER BY id LIMIT %(limit)s
