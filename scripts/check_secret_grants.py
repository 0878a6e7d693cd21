"""Checks, on SAM's expansion of template.yaml, that each function may read exactly the secrets
it names: every `<NAME>_ARN` variable's secret is granted (secretsmanager:GetSecretValue) to
the function's role, and no role may read a secret its function does not name. The token key
is named for every function (Globals) but granted only to those behind an HTTP route, which
sign or check tokens; the others never read it.

Usage: python3 check_secret_grants.py EXPANDED_TEMPLATE.json
"""

import json
import re
import sys

TOKEN_KEY = "JwtSecretName"
# MCP credentials (secretsmanager:browser-agent/mcp/...) are read by the agent tools through
# the extension, by a pattern no variable names.
MCP_SECRETS = ":secret:browser-agent/mcp/*"


def secret_of(value):
    """The secret a variable or a grant names: a parameter, or a secret resource."""
    if isinstance(value, dict):
        if "Ref" in value:
            return value["Ref"]
        if "Fn::If" in value:
            # [condition, when true, when false]: the secret named when the feature is on.
            return secret_of(value["Fn::If"][1])
        if "Fn::Sub" in value:
            found = re.search(r":secret:\$\{([A-Za-z0-9]+)\}-\?{6}$", value["Fn::Sub"])
            return found.group(1) if found else None
    return None


def granted(role, resources):
    """The secrets a role may read, from its own policies and the managed policies it has."""
    secrets = set()
    statements = [
        s for p in role.get("Policies", []) for s in p["PolicyDocument"]["Statement"]
    ]
    for arn in role.get("ManagedPolicyArns", []):
        if isinstance(arn, dict) and "Ref" in arn:
            policy = resources[arn["Ref"]]["Properties"]["PolicyDocument"]
            statements.extend(policy["Statement"])
    for s in statements:
        if isinstance(s, dict) and "Fn::If" in s:
            s = s["Fn::If"][1]
        actions = s.get("Action", [])
        actions = [actions] if isinstance(actions, str) else actions
        if not any(a.startswith("secretsmanager:GetSecretValue") for a in actions):
            continue
        targets = s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]]
        for t in targets:
            if isinstance(t, dict) and str(t.get("Fn::Sub", "")).endswith(MCP_SECRETS):
                continue
            name = secret_of(t)
            if name is None:
                raise SystemExit(f"a GetSecretValue grant names no single secret: {t}")
            secrets.add(name)
    return secrets


def main(path):
    resources = json.load(open(path))["Resources"]
    routed = {
        p["Properties"]["FunctionName"]["Ref"]
        for p in resources.values()
        if p["Type"] == "AWS::Lambda::Permission"
        and p["Properties"].get("Principal") == "apigateway.amazonaws.com"
    }
    problems = []
    for name, r in resources.items():
        if r["Type"] != "AWS::Lambda::Function":
            continue
        props = r["Properties"]
        variables = props.get("Environment", {}).get("Variables", {})
        named = {
            secret_of(v)
            for k, v in variables.items()
            if k.endswith("_ARN") and k != "STATE_MACHINE_ARN" and secret_of(v)
        }
        role = resources[props["Role"]["Fn::GetAtt"][0]]["Properties"]
        allowed = granted(role, resources)
        if name not in routed:
            named.discard(TOKEN_KEY)
        for secret in sorted(named - allowed):
            problems.append(f"{name}: names {secret} but may not read it")
        for secret in sorted(allowed - named):
            problems.append(f"{name}: may read {secret}, which it does not name")
    if problems:
        raise SystemExit("\n".join(problems))
    print(f"{path.rsplit('/', 1)[-1]}: every function may read exactly the secrets it names")


if __name__ == "__main__":
    main(sys.argv[1])
