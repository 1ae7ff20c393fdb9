import Postgres

/// Why `DatabaseRoles` refused the names it was given.
public enum DatabaseRolesError: Error, CustomStringConvertible, Sendable, Equatable {
    case badName(option: String, name: String)
    case sameRole(String)

    public var description: String {
        switch self {
        case .badName(let option, let name):
            "\(option) \(name) is not a plain lower-case name (letters, digits and _, at most 63, not starting with pg_ or a digit)"
        case .sameRole(let name): "\(name) cannot be two of the roles at once: the owner, the login and \(DatabaseRoles.serviceGroup) are three roles"
        }
    }
}

/// The roles Reclaim's database runs under (issue 25). The migrations run as the owner, which owns the schema and every
/// table; the service logs in as a member of the NOLOGIN group `reclaim_service`, owns nothing, and is granted (by
/// migration 0015 and its default privileges) only what it needs: never UPDATE, DELETE or TRUNCATE on the timelines and
/// the admin log, no DDL, no `session_replication_role`. `setupScript` is what `reclaim db roles` prints.
public struct DatabaseRoles: Sendable, Equatable {
    /// The group every grant names; fixed, because the migrations name it.
    public static let serviceGroup = "reclaim_service"
    /// The tables the service may only read and append to.
    public static let appendOnlyTables = ["case_events", "admin_events"]

    /// The database.
    public let database: String
    /// The role that owns the schema; the migrations run as it (`RECLAIM_MIGRATION_DATABASE_URL`).
    public let owner: String
    /// The role the service logs in as (`DATABASE_URL`): a member of `reclaim_service`, owning nothing.
    public let login: String

    /// Checks the names: they are written into SQL as identifiers (no bind can stand for one), so only plain ones pass.
    public init(database: String = "reclaim", owner: String = "reclaim_owner", login: String = "reclaim") throws(DatabaseRolesError) {
        for (option, name) in [("--database", database), ("--owner", owner), ("--login", login)] where !DatabaseRoles.isPlain(name) {
            throw .badName(option: option, name: name)
        }
        for name in [owner, login] where name == DatabaseRoles.serviceGroup { throw .sameRole(name) }
        if owner == login { throw .sameRole(owner) }
        self.database = database
        self.owner = owner
        self.login = login
    }

    static func isPlain(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 63, !name.hasPrefix("pg_"), name != "public" else { return false }
        return (first == "_" || ("a"..."z").contains(first))
            && name.unicodeScalars.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) }
    }

    // MARK: The setup

    /// The roles, made when missing (plain SQL, one transaction, safe to run again and from several sessions at once).
    /// An existing role that could rewrite history (a superuser login, a login that owns objects or is the owner) is
    /// refused with the statement that fixes it, never silently changed.
    public var rolesSQL: String {
        let group = DatabaseRoles.serviceGroup
        return """
            DO $roles$
            BEGIN
                -- Concurrent setups (test processes) take turns; the second finds the first's roles.
                PERFORM pg_advisory_xact_lock(\(DatabaseRoles.setupLockKey));
                IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(owner)') THEN
                    CREATE ROLE \(owner) LOGIN;
                END IF;
                IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(group)') THEN
                    CREATE ROLE \(group) NOLOGIN;
                END IF;
                IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(login)') THEN
                    CREATE ROLE \(login) LOGIN;
                END IF;
                IF NOT pg_has_role('\(login)', '\(group)', 'MEMBER') THEN
                    GRANT \(group) TO \(login);
                END IF;
                IF EXISTS (SELECT FROM pg_roles WHERE rolname = '\(owner)' AND rolsuper) THEN
                    RAISE EXCEPTION 'role \(owner) is a superuser; the owner of the schema must not be: ALTER ROLE \(owner) NOSUPERUSER (as another superuser), or name another with --owner';
                END IF;
                IF EXISTS (SELECT FROM pg_roles WHERE rolname IN ('\(login)', '\(group)')
                           AND (rolsuper OR rolcreaterole OR rolcreatedb OR rolreplication OR rolbypassrls)) THEN
                    RAISE EXCEPTION 'role \(login) or \(group) is a superuser or may create roles or databases: ALTER ROLE (it) NOSUPERUSER NOCREATEROLE NOCREATEDB NOREPLICATION NOBYPASSRLS, or name another login with --login';
                END IF;
                IF pg_has_role('\(login)', '\(owner)', 'MEMBER') THEN
                    RAISE EXCEPTION 'role \(login) is a member of the owner \(owner): REVOKE \(owner) FROM \(login)';
                END IF;
                IF EXISTS (SELECT FROM pg_shdepend WHERE refclassid = 'pg_authid'::regclass AND refobjid = '\(login)'::regrole AND deptype = 'o') THEN
                    RAISE EXCEPTION 'role \(login) owns objects (did it own the schema before migration 0015?): in its database, REASSIGN OWNED BY \(login) TO \(owner); if it owns the database, ALTER DATABASE (it) OWNER TO \(owner)';
                END IF;
            END
            $roles$;
            """
    }

    /// The database's own grants: only the service group (and the owner) may connect. Refuses a database another role owns.
    public var databaseGrantsSQL: String {
        """
        DO $database$
        BEGIN
            IF (SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = '\(database)') <> '\(owner)' THEN
                RAISE EXCEPTION 'database \(database) belongs to %, not \(owner): ALTER DATABASE \(database) OWNER TO \(owner), then in it REASSIGN OWNED BY % TO \(owner)',
                    (SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = '\(database)'),
                    (SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = '\(database)');
            END IF;
        END
        $database$;
        REVOKE ALL ON DATABASE \(database) FROM PUBLIC;
        GRANT CONNECT ON DATABASE \(database) TO \(DatabaseRoles.serviceGroup);
        """
    }

    /// What `reclaim db roles` prints: a psql script for a superuser (or a role with CREATEROLE and CREATEDB).
    public var setupScript: String {
        """
        -- Reclaim's database roles (`reclaim db roles`). Run once as a superuser, safe to run again:
        --   reclaim db roles | psql "host=... user=postgres dbname=postgres" -v ON_ERROR_STOP=1
        --   \(owner)  owns the schema and every table; the migrations run as it (RECLAIM_MIGRATION_DATABASE_URL).
        --   \(DatabaseRoles.serviceGroup)  NOLOGIN; the migrations grant it what the service may do: read and write the working
        --     tables, only read and append to the timelines and the admin log (no UPDATE, DELETE, TRUNCATE, DDL).
        --   \(login)  the service logs in as it (DATABASE_URL): a member of \(DatabaseRoles.serviceGroup), owning nothing.
        \(rolesSQL)
        SELECT 'CREATE DATABASE \(database) OWNER \(owner)' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '\(database)') \\gexec
        \(databaseGrantsSQL)
        -- Then give the two logins a password, unless pg_hba.conf authenticates them otherwise (peer, cert):
        --   \\password \(owner)
        --   \\password \(login)
        -- and set RECLAIM_MIGRATION_DATABASE_URL=postgresql://\(owner)@HOST/\(database), DATABASE_URL=postgresql://\(login)@HOST/\(database);
        -- `reclaim migrate` (or `reclaim serve` with both set) applies the migrations and their grants.

        """
    }

    // An arbitrary constant that names the setup's lock ("ROLE").
    static let setupLockKey: Int64 = 0x524F_4C45

    // MARK: The service's check

    /// The connected role, and what lets it rewrite the timelines or the admin log or stops it doing its work, in words
    /// for the operator (none for a proper service role). `serve` refuses to start on any.
    public static func check(on connection: PostgresConnection) throws -> (role: String, problems: [String]) {
        var problems: [String] = []
        var name = ""
        let role = try connection.query(
            """
            SELECT current_user AS name, rolsuper AS superuser, has_parameter_privilege('session_replication_role', 'SET') AS replica
            FROM pg_roles WHERE rolname = current_user
            """)
        if let row = role.first {
            name = try row.decode("name", as: String.self)
            if try row.decode("superuser", as: Bool.self) { problems.append("is a superuser") }
            if try row.decode("replica", as: Bool.self) { problems.append("may set session_replication_role (which switches triggers off)") }
        }
        let tables = try connection.query(
            """
            SELECT t AS name, pg_has_role(c.relowner, 'MEMBER') AS owns,
                   has_table_privilege(c.oid, 'UPDATE') OR has_table_privilege(c.oid, 'DELETE') OR has_table_privilege(c.oid, 'TRUNCATE') AS rewrites
            FROM unnest(\(appendOnlyTables)) AS t JOIN pg_class c ON c.oid = to_regclass(t) ORDER BY t
            """)
        var owned: [String] = []
        var rewritable: [String] = []
        for row in tables {
            let name = try row.decode("name", as: String.self)
            if try row.decode("owns", as: Bool.self) { owned.append(name) }
            if try row.decode("rewrites", as: Bool.self) { rewritable.append(name) }
        }
        if !owned.isEmpty { problems.append("owns \(owned.joined(separator: ", ")) (or is a member of the owner)") }
        if !rewritable.isEmpty { problems.append("may UPDATE, DELETE or TRUNCATE \(rewritable.joined(separator: ", "))") }
        // A table of a migration applied by another role than the owner misses the default privileges.
        let unreadable = try connection.query(
            """
            SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT has_table_privilege(c.oid, 'SELECT') ORDER BY c.relname
            """)
        for row in unreadable {
            problems.append(
                "cannot read \(try row.decode("name", as: String.self)) (was a migration applied by another role than the schema's owner?)")
        }
        return (name, problems)
    }
}
