with per_vehicle as (
    select
        t.vehicle_id,
        count(*) as trips,
        sum(t.distance_km) as total_distance_km,
        count(*) filter (where t.distance_km is null) as trips_without_distance,
        avg(100.0 * t.cargo_kg / v.capacity_kg) as avg_load_pct
    from {{ source('raw', 'trips') }} as t
    join {{ source('raw', 'vehicles') }} as v on v.vehicle_id = t.vehicle_id
    group by t.vehicle_id
)
select
    v.vehicle_id,
    v.plate,
    cast(v.electric as boolean) as electric,
    coalesce(u.trips, 0) as trips,
    u.total_distance_km,
    coalesce(u.trips_without_distance, 0) as trips_without_distance,
    u.avg_load_pct
from {{ source('raw', 'vehicles') }} as v
left join per_vehicle as u on u.vehicle_id = v.vehicle_id
