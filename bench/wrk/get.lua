-- GET one workload by id, again and again. Environment: TOKEN, WORKLOAD_ID.
local token = os.getenv("TOKEN")
local id = os.getenv("WORKLOAD_ID")
wrk.method = "GET"
wrk.path = "/api/v1/workloads/distributed/" .. id
wrk.headers["Authorization"] = "Bearer " .. token
